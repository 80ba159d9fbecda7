"""Network-signal checks over HTTP: validation, the sandbox operator's test numbers,
carrier billing's cap and idempotency, the risk score, and live mode without credentials."""

from __future__ import annotations

import hashlib

import pytest

from messaging.numbers.network import adapters as a

pytestmark = pytest.mark.django_db
BASE = "/api/v1/numbers/network-apis"
OK = "+14155550123"


def post(client, operation: str, body: dict):
    return client.post(f"{BASE}/{operation}", body, format="json")


def data(response) -> dict:
    assert response.status_code in (200, 201), response.content
    return response.json()["data"]


def test_status_in_test_mode(tenant):
    assert data(tenant.client().get(f"{BASE}/status")) == {"enabled": True}


def test_live_without_credentials_fails_closed(tenant_factory):
    live = tenant_factory(sandbox=False)
    client = live.client()
    assert data(client.get(f"{BASE}/status")) == {"enabled": False}
    for operation, body in (("sim-swap:check", {"phoneNumber": OK}),
                            ("risk:score", {"phoneNumber": OK}),
                            ("carrier-billing:charge", {}),
                            ("number-verification:verify", {"phoneNumber": OK})):
        response = post(client, operation, body)
        assert response.status_code == 503, operation
        assert response.json()["error"]["code"] == "SERVICE_UNAVAILABLE"


class TestNumberVerification:
    def test_match_and_mismatch(self, tenant):
        client = tenant.client()
        assert data(post(client, "number-verification:verify", {"phoneNumber": OK})) == {
            "devicePhoneNumberVerified": True}
        assert data(post(client, "number-verification:verify", {
            "phoneNumber": a.MISMATCH}))["devicePhoneNumberVerified"] is False
        assert data(post(client, "number-verification:verify", {
            "phoneNumber": OK, "accessToken": a.SANDBOX_MISMATCH_TOKEN,
        }))["devicePhoneNumberVerified"] is False

    def test_hashed(self, tenant):
        client = tenant.client()
        hashed = hashlib.sha256(a.SIM_SWAPPED.encode()).hexdigest()
        assert data(post(client, "number-verification:verify", {
            "hashedPhoneNumber": hashed}))["devicePhoneNumberVerified"] is True
        assert data(post(client, "number-verification:verify", {
            "hashedPhoneNumber": "0" * 64}))["devicePhoneNumberVerified"] is False

    @pytest.mark.parametrize("body", [{}, {"phoneNumber": OK, "hashedPhoneNumber": "a" * 64},
                                      {"phoneNumber": "4155550123"},
                                      {"hashedPhoneNumber": "xyz"}])
    def test_validation(self, tenant, body):
        response = post(tenant.client(), "number-verification:verify", body)
        assert response.status_code == 422
        assert response.json()["error"]["code"] == "VALIDATION_ERROR"


class TestSimSwap:
    def test_check_window(self, tenant):
        client = tenant.client()
        assert data(post(client, "sim-swap:check", {"phoneNumber": a.SIM_SWAPPED}))["swapped"]
        assert not data(post(client, "sim-swap:check", {"phoneNumber": a.SIM_SWAPPED,
                                                         "maxAge": 1}))["swapped"]
        assert not data(post(client, "sim-swap:check", {"phoneNumber": OK}))["swapped"]
        for bad in (0, 2401):
            assert post(client, "sim-swap:check", {"phoneNumber": OK,
                                                   "maxAge": bad}).status_code == 422

    def test_retrieve_date(self, tenant):
        date = data(post(tenant.client(), "sim-swap:retrieve-date",
                         {"phoneNumber": a.SIM_SWAPPED}))["latestSimChange"]
        assert date.endswith("Z") or "+00:00" in date


def test_kyc_returns_verdicts_never_data(tenant):
    client = tenant.client()
    result = data(post(client, "kyc-match:match", {"phoneNumber": OK, "givenName": "Ada",
                                                  "birthdate": "1990-04-01"}))
    assert result == {"givenNameMatch": "true", "birthdateMatch": "true"}
    miss = data(post(client, "kyc-match:match", {"phoneNumber": a.MISMATCH, "name": "X"}))
    assert miss == {"nameMatch": "false"}
    assert post(client, "kyc-match:match", {"phoneNumber": OK,
                                           "birthdate": "01/04/1990"}).status_code == 422


class TestLocation:
    BODY = {"latitude": 48.85, "longitude": 2.35, "radius": 5000}

    def test_results(self, tenant):
        client = tenant.client()
        assert data(post(client, "device-location:verify", {
            "phoneNumber": OK, **self.BODY}))["verificationResult"] == "TRUE"
        partial = data(post(client, "device-location:verify", {
            "phoneNumber": a.SMS_ONLY, **self.BODY}))
        assert partial == {"verificationResult": "PARTIAL", "matchRate": 60}

    @pytest.mark.parametrize("change", [{"radius": 1999}, {"radius": 200001},
                                        {"latitude": 91}, {"longitude": -181},
                                        {"maxAge": 59}, {"maxAge": 3601}])
    def test_ranges(self, tenant, change):
        response = post(tenant.client(), "device-location:verify",
                        {"phoneNumber": OK, **self.BODY, **change})
        assert response.status_code == 422


def test_reachability(tenant):
    client = tenant.client()
    statuses = [data(post(client, "device-status:reachability", {"phoneNumber": n}))[
        "reachabilityStatus"] for n in (OK, a.SMS_ONLY, a.NOT_CONNECTED)]
    assert statuses == ["CONNECTED_DATA", "CONNECTED_SMS", "NOT_CONNECTED"]


def test_operator_down_is_reported(tenant):
    response = post(tenant.client(), "device-status:reachability",
                    {"phoneNumber": a.OPERATOR_DOWN})
    assert response.status_code == 422
    assert response.json()["error"]["code"] == "NETWORK_SIGNAL_UNAVAILABLE"


class TestAge:
    def test_verified_and_fails_closed(self, tenant):
        client = tenant.client()
        ok = data(post(client, "age-verification:verify", {"phoneNumber": OK,
                                                           "ageThreshold": 18}))
        assert ok == {"ageVerified": True, "ageThreshold": 18, "ageCheck": "true"}
        young = data(post(client, "age-verification:verify", {"phoneNumber": a.MISMATCH,
                                                              "ageThreshold": 18}))
        assert young["ageVerified"] is False
        down = data(post(client, "age-verification:verify", {"phoneNumber": a.OPERATOR_DOWN,
                                                             "ageThreshold": 18}))
        assert down == {"ageVerified": False, "ageThreshold": 18, "ageCheck": "not_available"}

    @pytest.mark.parametrize("threshold", [12, 121])
    def test_threshold_range(self, tenant, threshold):
        assert post(tenant.client(), "age-verification:verify", {
            "phoneNumber": OK, "ageThreshold": threshold}).status_code == 422


def test_scam_signal(tenant):
    client = tenant.client()
    scam = data(post(client, "scam-signal:assess", {"phoneNumber": a.SCAM}))
    assert scam == {"scam_signal_detected": True, "risk_level": "high", "signals": {
        "active_call": True, "call_forwarding": True, "sim_swap": False}}
    calm = data(post(client, "scam-signal:assess", {"phoneNumber": OK}))
    assert calm["scam_signal_detected"] is False
    assert calm["risk_level"] == "low"
    hashed = data(post(client, "scam-signal:assess", {
        "hashedPhoneNumber": hashlib.sha256(a.SIM_SWAPPED.encode()).hexdigest()}))
    assert hashed["signals"]["sim_swap"] is True
    assert hashed["risk_level"] == "medium"


class TestCarrierBilling:
    BODY = {"phoneNumber": OK, "amount": "4.99", "currency": "EUR",
            "description": "Premium article"}

    def test_charge_and_idempotency(self, tenant):
        client = tenant.client()
        first = post(client, "carrier-billing:charge", {**self.BODY, "idempotencyKey": "k1"})
        assert first.status_code == 201
        assert first.json()["data"]["status"] == "succeeded"
        again = post(client, "carrier-billing:charge", {**self.BODY, "idempotencyKey": "k1"})
        assert again.status_code == 200
        assert again.json()["data"]["paymentId"] == first.json()["data"]["paymentId"]
        other = post(client, "carrier-billing:charge", {**self.BODY, "amount": "5.00",
                                                        "idempotencyKey": "k1"})
        assert other.status_code == 409

    def test_cap_and_validation(self, tenant, settings):
        settings.NETWORK_APIS_CARRIER_BILLING_MAX_AMOUNT = "10"
        client = tenant.client()
        above = post(client, "carrier-billing:charge", {**self.BODY, "amount": "10.01"})
        assert above.status_code == 422
        assert above.json()["error"]["code"] == "CARRIER_BILLING_AMOUNT_ABOVE_CAP"
        for change in ({"amount": "0"}, {"amount": "-1"}, {"amount": "NaN"},
                       {"currency": "eur"}, {"description": "x" * 141}):
            assert post(client, "carrier-billing:charge", {**self.BODY, **change}
                        ).status_code == 422, change


class TestRiskScore:
    def test_clean_number_allows(self, tenant):
        result = data(post(tenant.client(), "risk:score", {"phoneNumber": OK}))
        assert (result["decision"], result["risk_score"], result["risk_level"]) == (
            "allow", 0, "low")
        assert result["signals"]["number_verification"]["status"] == "not_requested"

    def test_swapped_and_forwarded_denies(self, tenant):
        result = data(post(tenant.client(), "risk:score", {
            "phoneNumber": a.SIM_SWAPPED, "callForwardingUnconditional": True,
            "reputationRiskLevel": "high", "context": {"action": "payout"}}))
        assert result["risk_score"] == 70
        assert result["decision"] == "deny"
        assert result["risk_level"] == "high"
        assert set(result["reason_codes"]) == {"SIM_SWAP_RECENT", "CALL_FORWARDING_ACTIVE",
                                               "REPUTATION_HIGH"}

    def test_weights_and_thresholds(self, tenant):
        result = data(post(tenant.client(), "risk:score", {
            "phoneNumber": a.MISMATCH, "accessToken": "t",
            "claimedLocation": {"latitude": 1, "longitude": 1, "radius": 3000},
            "weights": {"number_verification": 10, "device_location": 10},
            "thresholds": {"review": 15, "deny": 90}}))
        assert result["risk_score"] == 20
        assert result["decision"] == "review"
        assert "LOCATION_MISMATCH" in result["reason_codes"]

    def test_unavailable_signals_contribute_nothing(self, tenant):
        result = data(post(tenant.client(), "risk:score", {"phoneNumber": a.OPERATOR_DOWN,
                                                           "roaming": True}))
        assert set(result["unavailable_signals"]) == {"sim_swap", "call_forwarding",
                                                      "reachability"}
        assert all(result["signals"][n]["contribution"] == 0
                   for n in result["unavailable_signals"])
        assert result["risk_score"] == 10

    @pytest.mark.parametrize("change", [{"weights": {"sim_swap": 101}},
                                        {"weights": {"bogus": 1}},
                                        {"thresholds": {"review": 80, "deny": 50}},
                                        {"reputationRiskLevel": "extreme"},
                                        {"simSwapMaxAge": 0}])
    def test_validation(self, tenant, change):
        response = post(tenant.client(), "risk:score", {"phoneNumber": OK, **change})
        assert response.status_code == 422
