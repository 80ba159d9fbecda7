"""The CAMARA live adapter against a loopback operator gateway: OAuth client credentials,
request shapes, answers mapped back, operator errors reported."""

from __future__ import annotations

import base64
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs

import pytest

pytestmark = pytest.mark.django_db
BASE = "/api/v1/numbers/network-apis"


class Gateway:
    def __init__(self) -> None:
        self.seen: list[tuple[str, dict, dict]] = []
        self.tokens = 0
        gateway = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 - the http.server API
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                headers = {k.lower(): v for k, v in self.headers.items()}
                if self.path == "/oauth/token":
                    assert headers["authorization"] == "Basic " + base64.b64encode(
                        b"client-1:secret-1").decode()
                    assert parse_qs(raw.decode())["grant_type"] == ["client_credentials"]
                    gateway.tokens += 1
                    return self._json(200, {"access_token": "op-token", "expires_in": 3600,
                                            "token_type": "Bearer"})
                body = json.loads(raw)
                gateway.seen.append((self.path, body, headers))
                if headers.get("authorization") not in ("Bearer op-token", "Bearer device-tok"):
                    return self._json(401, {"status": 401, "code": "UNAUTHENTICATED"})
                if self.path == "/camara/sim-swap/v0/check":
                    return self._json(200, {"swapped": body["phoneNumber"].endswith("1")})
                if self.path == "/camara/number-verification/v0/verify":
                    return self._json(200, {"devicePhoneNumberVerified": True})
                if self.path == "/camara/location-verification/v1/verify":
                    return self._json(200, {"verificationResult": "PARTIAL", "matchRate": 74})
                if self.path == "/camara/carrier-billing/v0/payments":
                    return self._json(201, {"paymentId": "pay-77", "paymentStatus": "succeeded"})
                return self._json(404, {"status": 404, "code": "NOT_FOUND"})

            def _json(self, status, payload):
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"


@pytest.fixture
def gateway(settings):
    gateway = Gateway()
    settings.ALLOW_PRIVATE_WEBHOOK_TARGETS = True
    settings.NETWORK_APIS_BASE_URL = gateway.url + "/camara"
    settings.NETWORK_APIS_TOKEN_URL = gateway.url + "/oauth/token"
    settings.NETWORK_APIS_CLIENT_ID = "client-1"
    settings.NETWORK_APIS_CLIENT_SECRET = "secret-1"
    yield gateway
    gateway.server.shutdown()


def test_live_checks_speak_camara(gateway, tenant_factory):
    client = tenant_factory(sandbox=False).client()
    assert client.get(f"{BASE}/status").json()["data"] == {"enabled": True}
    swapped = client.post(f"{BASE}/sim-swap:check", {"phoneNumber": "+14155550121",
                                                     "maxAge": 48}, format="json")
    assert swapped.json()["data"] == {"swapped": True}
    path, body, headers = gateway.seen[-1]
    assert body == {"phoneNumber": "+14155550121", "maxAge": 48}
    assert headers["x-correlator"]
    location = client.post(f"{BASE}/device-location:verify", {
        "phoneNumber": "+14155550122", "latitude": 1.5, "longitude": 2.5, "radius": 2500},
        format="json").json()["data"]
    assert location == {"verificationResult": "PARTIAL", "matchRate": 74}
    assert gateway.seen[-1][1] == {"device": {"phoneNumber": "+14155550122"}, "area": {
        "areaType": "CIRCLE", "center": {"latitude": 1.5, "longitude": 2.5}, "radius": 2500}}
    assert gateway.tokens == 1  # the token is reused until it nears expiry


def test_device_token_and_billing_shapes(gateway, tenant_factory):
    client = tenant_factory(sandbox=False).client()
    verified = client.post(f"{BASE}/number-verification:verify", {
        "phoneNumber": "+14155550122", "accessToken": "device-tok"}, format="json")
    assert verified.json()["data"] == {"devicePhoneNumberVerified": True}
    assert gateway.seen[-1][2]["authorization"] == "Bearer device-tok"
    charge = client.post(f"{BASE}/carrier-billing:charge", {
        "phoneNumber": "+14155550122", "amount": "2.50", "currency": "USD",
        "description": "Ride", "idempotencyKey": "ride-1"}, format="json")
    assert charge.status_code == 201
    assert charge.json()["data"]["paymentId"] == "pay-77"
    sent = gateway.seen[-1][1]["amountTransaction"]
    assert sent["clientCorrelator"] == "ride-1"
    assert sent["paymentAmount"]["chargingInformation"] == {
        "amount": "2.5000", "currency": "USD", "description": "Ride"}


def test_operator_refusal_is_reported(gateway, tenant_factory):
    client = tenant_factory(sandbox=False).client()
    response = client.post(f"{BASE}/device-status:reachability",
                           {"phoneNumber": "+14155550122"}, format="json")
    assert response.status_code == 422
    assert response.json()["error"]["code"] == "NETWORK_SIGNAL_UNAVAILABLE"
    risk = client.post(f"{BASE}/risk:score", {"phoneNumber": "+14155550120"},
                       format="json").json()["data"]
    assert "reachability" in risk["unavailable_signals"]
    assert risk["signals"]["sim_swap"]["status"] == "evaluated"


def test_verify_sna_uses_the_same_operator_adapter(gateway, tenant_factory):
    client = tenant_factory(sandbox=False).client()
    response = client.post("/api/v1/verify/send", {"to": "+14155550122", "channel": "sna",
                                                   "device_token": "device-tok"}, format="json")
    assert response.status_code == 201, response.content
    assert response.json()["data"]["status"] == "verified"
    path, body, headers = gateway.seen[-1]
    assert path == "/camara/number-verification/v0/verify"
    assert body == {"phoneNumber": "+14155550122"}
    assert headers["authorization"] == "Bearer device-tok"


def test_verify_sna_sandbox_mismatch_number(tenant):
    response = tenant.client().post("/api/v1/verify/send", {
        "to": "+15005550103", "channel": "sna", "device_token": "any"}, format="json")
    assert response.json()["data"]["status"] == "failed"
