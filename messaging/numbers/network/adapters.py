"""The operator adapter: one interface, a CAMARA live client and the sandbox double.

    adapter = adapter_for(organization)       # 503 SERVICE_UNAVAILABLE when not configured
    adapter.sim_swap_check(phone_number="+1415...", max_age_hours=240) -> bool

- Test mode (`organization.sandbox`): `SandboxNetwork`, which never calls out and answers
  by the documented test numbers (below; docs/network-apis.md).
- Live mode: `CamaraNetwork` against the operator gateway of `conf.py`: an OAuth 2.0 client
  credentials token (cached until shortly before it expires), then the CAMARA request and
  response shapes. Calls go through platform_core/net/provider_client (checked addresses,
  retries, breaker). An operator's 4xx answer raises `SignalUnavailable` (its code kept).

Verify's `sna` channel uses the same adapter's number verification
(`install_verify_adapter`).
"""

from __future__ import annotations

import base64
import hashlib
import json
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any, Protocol
from urllib.parse import urlencode

from django.core.cache import cache

from platform_core.errors import APIError
from platform_core.net import provider_client

from . import conf

PROVIDER = "network_operator"

# The sandbox's test numbers.
SIM_SWAPPED = "+15005550101"
NOT_CONNECTED = "+15005550102"
MISMATCH = "+15005550103"
SCAM = "+15005550104"
OPERATOR_DOWN = "+15005550105"
SMS_ONLY = "+15005550106"
SANDBOX_MISMATCH_TOKEN = "sandbox-mismatch"  # noqa: S105 - a documented test value
SANDBOX_AGE = {MISMATCH: 16}
DEFAULT_AGE = 35


class SignalUnavailable(Exception):
    def __init__(self, signal: str, reason: str) -> None:
        super().__init__(f"{signal}: {reason}")
        self.signal = signal
        self.reason = reason


@dataclass(frozen=True)
class Charge:
    payment_id: str
    status: str


class NetworkAdapter(Protocol):
    name: str

    def verify_number(self, *, phone_number: str | None, hashed_phone_number: str | None,
                      access_token: str | None) -> bool: ...

    def sim_swap_check(self, *, phone_number: str, max_age_hours: int) -> bool: ...

    def sim_swap_date(self, *, phone_number: str) -> datetime | None: ...

    def kyc_match(self, *, phone_number: str, attributes: dict[str, Any]) -> dict[str, str]: ...

    def location_verify(self, *, phone_number: str, latitude: float, longitude: float,
                        radius: int, max_age: int | None) -> tuple[str, int | None]: ...

    def reachability(self, *, phone_number: str) -> str: ...

    def charge(self, *, phone_number: str, amount: Decimal, currency: str, description: str,
               merchant_reference: str, correlator: str) -> Charge: ...

    def age_check(self, *, phone_number: str, age_threshold: int,
                  attributes: dict[str, Any]) -> str: ...

    def call_forwarding(self, *, phone_number: str) -> bool: ...

    def active_call(self, *, phone_number: str) -> bool: ...


def sha256_number(number: str) -> str:
    return hashlib.sha256(number.encode()).hexdigest()


class SandboxNetwork:
    """Test mode's operator. Test numbers: see the module constants and docs."""

    name = "sandbox"
    _KNOWN = (SIM_SWAPPED, NOT_CONNECTED, MISMATCH, SCAM, OPERATOR_DOWN, SMS_ONLY)

    @staticmethod
    def _up(number: str, signal: str) -> None:
        if number == OPERATOR_DOWN:
            raise SignalUnavailable(signal, "the sandbox operator does not answer for "
                                    f"{OPERATOR_DOWN}")

    def verify_number(self, *, phone_number, hashed_phone_number, access_token) -> bool:
        if hashed_phone_number:
            match = next((n for n in self._KNOWN if sha256_number(n) == hashed_phone_number),
                         None)
            phone_number = match or ""
            if not match:  # any other hashed number: the device's number is not it
                return False
        self._up(phone_number, "number_verification")
        return phone_number != MISMATCH and access_token != SANDBOX_MISMATCH_TOKEN

    def sim_swap_check(self, *, phone_number, max_age_hours) -> bool:
        self._up(phone_number, "sim_swap")
        changed = self.sim_swap_date(phone_number=phone_number)
        return changed is not None and changed >= datetime.now(UTC) - timedelta(
            hours=max_age_hours)

    def sim_swap_date(self, *, phone_number) -> datetime | None:
        self._up(phone_number, "sim_swap")
        now = datetime.now(UTC).replace(microsecond=0)
        return now - (timedelta(hours=2) if phone_number == SIM_SWAPPED else
                      timedelta(days=400))

    def kyc_match(self, *, phone_number, attributes) -> dict[str, str]:
        self._up(phone_number, "kyc_match")
        verdict = "false" if phone_number == MISMATCH else "true"
        return {f"{name}Match": verdict for name in attributes}

    def location_verify(self, *, phone_number, latitude, longitude, radius, max_age):
        self._up(phone_number, "device_location")
        if phone_number == NOT_CONNECTED:
            return "UNKNOWN", None
        if phone_number == MISMATCH:
            return "FALSE", None
        if phone_number == SMS_ONLY:
            return "PARTIAL", 60
        return "TRUE", None

    def reachability(self, *, phone_number) -> str:
        self._up(phone_number, "reachability")
        return {NOT_CONNECTED: "NOT_CONNECTED", SMS_ONLY: "CONNECTED_SMS"}.get(
            phone_number, "CONNECTED_DATA")

    def charge(self, *, phone_number, amount, currency, description, merchant_reference,
               correlator) -> Charge:
        self._up(phone_number, "carrier_billing")
        status = "failed" if phone_number == MISMATCH else "succeeded"
        return Charge(payment_id="sbx_pay_" + hashlib.sha256(correlator.encode()).hexdigest()[
            :24], status=status)

    def age_check(self, *, phone_number, age_threshold, attributes) -> str:
        self._up(phone_number, "age_verification")
        return "true" if SANDBOX_AGE.get(phone_number, DEFAULT_AGE) >= age_threshold else "false"

    def call_forwarding(self, *, phone_number) -> bool:
        self._up(phone_number, "call_forwarding")
        return phone_number == SCAM

    def active_call(self, *, phone_number) -> bool:
        self._up(phone_number, "active_call")
        return phone_number == SCAM


class CamaraNetwork:
    """The operator's CAMARA gateway (live mode)."""

    name = "camara"
    TOKEN_MARGIN = 60

    def __init__(self) -> None:
        self.base_url = str(conf.setting("NETWORK_APIS_BASE_URL")).rstrip("/")
        self.token_url = str(conf.setting("NETWORK_APIS_TOKEN_URL"))
        self.client_id = str(conf.setting("NETWORK_APIS_CLIENT_ID"))
        self.client_secret = str(conf.setting("NETWORK_APIS_CLIENT_SECRET"))
        self.scope = str(conf.setting("NETWORK_APIS_SCOPE", ""))

    # -- plumbing --------------------------------------------------------------------
    def _token(self) -> str:
        key = "network_apis:token:" + hashlib.sha256(
            f"{self.token_url}|{self.client_id}".encode()).hexdigest()[:24]
        token = cache.get(key)
        if token:
            return token
        basic = base64.b64encode(f"{self.client_id}:{self.client_secret}".encode()).decode()
        form = {"grant_type": "client_credentials", **({"scope": self.scope} if self.scope
                                                       else {})}
        answer = provider_client.request(
            PROVIDER, "POST", self.token_url, content=urlencode(form).encode(),
            headers={"Authorization": f"Basic {basic}",
                     "Content-Type": "application/x-www-form-urlencoded",
                     "Accept": "application/json"})
        body = answer.json() if answer.ok else None
        if not isinstance(body, dict) or not body.get("access_token"):
            raise SignalUnavailable("oauth", f"token endpoint answered {answer.status_code}")
        lifetime = int(body.get("expires_in") or 300)
        cache.set(key, body["access_token"], max(lifetime - self.TOKEN_MARGIN, 1))
        return str(body["access_token"])

    def _call(self, signal: str, path: str, payload: dict, *, token: str | None = None,
              correlator: str | None = None) -> dict:
        headers = {"Authorization": f"Bearer {token or self._token()}",
                   "Content-Type": "application/json", "Accept": "application/json",
                   "x-correlator": correlator or f"engage-{time.time_ns()}"}
        answer = provider_client.request(PROVIDER, "POST", f"{self.base_url}{path}",
                                         content=json.dumps(payload).encode(), headers=headers)
        body = answer.json()
        if not answer.ok or not isinstance(body, dict):
            code = body.get("code") if isinstance(body, dict) else None
            raise SignalUnavailable(signal, f"operator answered {answer.status_code}"
                                    + (f" {code}" if code else ""))
        return body

    # -- operations ------------------------------------------------------------------
    def verify_number(self, *, phone_number, hashed_phone_number, access_token) -> bool:
        payload = {"hashedPhoneNumber": hashed_phone_number} if hashed_phone_number else \
            {"phoneNumber": phone_number}
        body = self._call("number_verification", "/number-verification/v0/verify", payload,
                          token=access_token or None)
        return body.get("devicePhoneNumberVerified") is True

    def sim_swap_check(self, *, phone_number, max_age_hours) -> bool:
        body = self._call("sim_swap", "/sim-swap/v0/check",
                          {"phoneNumber": phone_number, "maxAge": max_age_hours})
        return body.get("swapped") is True

    def sim_swap_date(self, *, phone_number) -> datetime | None:
        body = self._call("sim_swap", "/sim-swap/v0/retrieve-date", {"phoneNumber": phone_number})
        raw = body.get("latestSimChange")
        if not raw:
            return None
        try:
            return datetime.fromisoformat(str(raw).replace("Z", "+00:00"))
        except ValueError as exc:
            raise SignalUnavailable("sim_swap", "unreadable latestSimChange") from exc

    def kyc_match(self, *, phone_number, attributes) -> dict[str, str]:
        body = self._call("kyc_match", "/kyc-match/v0.2/match",
                          {"phoneNumber": phone_number, **attributes})
        wanted = {f"{name}Match" for name in attributes}
        return {k: str(v).lower() for k, v in body.items() if k in wanted}

    def location_verify(self, *, phone_number, latitude, longitude, radius, max_age):
        payload: dict[str, Any] = {
            "device": {"phoneNumber": phone_number},
            "area": {"areaType": "CIRCLE", "center": {"latitude": latitude,
                                                      "longitude": longitude},
                     "radius": radius}}
        if max_age is not None:
            payload["maxAge"] = max_age
        body = self._call("device_location", "/location-verification/v1/verify", payload)
        result = str(body.get("verificationResult", "UNKNOWN"))
        if result not in ("TRUE", "FALSE", "PARTIAL", "UNKNOWN"):
            result = "UNKNOWN"
        rate = body.get("matchRate")
        return result, rate if isinstance(rate, int) else None

    def reachability(self, *, phone_number) -> str:
        body = self._call("reachability", "/device-status/v0/connectivity",
                          {"device": {"phoneNumber": phone_number}})
        status = str(body.get("connectivityStatus", ""))
        if status not in ("CONNECTED_DATA", "CONNECTED_SMS", "NOT_CONNECTED"):
            raise SignalUnavailable("reachability", f"unknown status {status[:40]!r}")
        return status

    def charge(self, *, phone_number, amount, currency, description, merchant_reference,
               correlator) -> Charge:
        payload = {"amountTransaction": {
            "phoneNumber": phone_number, "clientCorrelator": correlator,
            "referenceCode": merchant_reference or correlator,
            "paymentAmount": {"chargingInformation": {
                "amount": str(amount), "currency": currency, "description": description}}}}
        body = self._call("carrier_billing", "/carrier-billing/v0/payments", payload,
                          correlator=correlator)
        payment_id = body.get("paymentId") or (body.get("amountTransaction") or {}).get(
            "serverReferenceCode")
        if not payment_id:
            raise SignalUnavailable("carrier_billing", "no paymentId in the answer")
        return Charge(payment_id=str(payment_id),
                      status=str(body.get("paymentStatus") or body.get("status") or "processing"))

    def age_check(self, *, phone_number, age_threshold, attributes) -> str:
        body = self._call("age_verification", "/kyc-age-verification/v0.1/verify",
                          {"phoneNumber": phone_number, "ageThreshold": age_threshold,
                           **attributes})
        value = str(body.get("ageCheck", "not_available")).lower()
        return value if value in ("true", "false") else "not_available"

    def call_forwarding(self, *, phone_number) -> bool:
        body = self._call("call_forwarding",
                          "/call-forwarding-signal/v0.3/unconditional-call-forwardings",
                          {"phoneNumber": phone_number})
        return body.get("active") is True

    def active_call(self, *, phone_number) -> bool:
        # No CAMARA API reports an ongoing call; an operator that offers one plugs in here.
        raise SignalUnavailable("active_call", "not offered by the operator gateway")


def enabled(organization) -> bool:
    return bool(organization.sandbox) or conf.configured()


def adapter_for(organization) -> NetworkAdapter:
    if organization.sandbox:
        return SandboxNetwork()
    if not conf.configured():
        raise APIError("SERVICE_UNAVAILABLE", "Network-signal checks need operator "
                       "credentials on this deployment (NETWORK_APIS_*).",
                       details={"feature": "network_apis"})
    return CamaraNetwork()


class _VerifyBridge:
    """Verify's `sna` port over this adapter (see messaging/verify/network.py)."""

    def verify(self, *, phone_number: str, device_token: str) -> bool:
        try:
            return CamaraNetwork().verify_number(phone_number=phone_number,
                                                 hashed_phone_number=None,
                                                 access_token=device_token)
        except SignalUnavailable:
            return False


def _verify_port():
    from messaging.verify import network

    if not conf.configured():
        raise network.not_wired("no network operator is configured on this deployment.")
    return _VerifyBridge()


def install_verify_adapter() -> None:
    """Live Verify `sna` asks the operator gateway (503 PROVIDER_NOT_WIRED without one)."""
    from messaging.verify import network

    network.register_number_verification(_verify_port)
