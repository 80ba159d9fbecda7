"""The network-signal operations: validation done by the API, the adapter asked here."""

from __future__ import annotations

import hashlib
import json
from decimal import Decimal
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone

from platform_core.audit.services import audit_record
from platform_core.errors import APIError
from platform_core.identity.principal import Principal

from . import conf
from .adapters import SignalUnavailable, adapter_for
from .models import CarrierCharge
from .risk import score

KYC_FIELDS = ("name", "givenName", "familyName", "birthdate", "idDocument", "email")


def unavailable(exc: SignalUnavailable) -> APIError:
    return APIError("NETWORK_SIGNAL_UNAVAILABLE", details={"signal": exc.signal,
                                                            "reason": exc.reason})


def _attributes(data: dict[str, Any]) -> dict[str, Any]:
    return {k: (v.isoformat() if hasattr(v, "isoformat") else v)
            for k, v in data.items() if k in KYC_FIELDS and v not in (None, "")}


def run(organization, operation: str, data: dict[str, Any]) -> dict[str, Any]:
    adapter = adapter_for(organization)
    number = data.get("phoneNumber")
    try:
        if operation == "number-verification:verify":
            verified = adapter.verify_number(phone_number=number,
                                             hashed_phone_number=data.get("hashedPhoneNumber"),
                                             access_token=data.get("accessToken"))
            return {"devicePhoneNumberVerified": verified is True}
        if operation == "sim-swap:check":
            return {"swapped": adapter.sim_swap_check(phone_number=number,
                                                      max_age_hours=data["maxAge"])}
        if operation == "sim-swap:retrieve-date":
            return {"latestSimChange": adapter.sim_swap_date(phone_number=number)}
        if operation == "kyc-match:match":
            return adapter.kyc_match(phone_number=number, attributes=_attributes(data))
        if operation == "device-location:verify":
            result, rate = adapter.location_verify(
                phone_number=number, latitude=data["latitude"], longitude=data["longitude"],
                radius=data["radius"], max_age=data.get("maxAge"))
            return {"verificationResult": result, "matchRate": rate}
        if operation == "device-status:reachability":
            return {"reachabilityStatus": adapter.reachability(phone_number=number)}
        if operation == "age-verification:verify":
            return age_verify(adapter, data)
        if operation == "scam-signal:assess":
            return scam_assess(adapter, data)
        if operation == "risk:score":
            return score(adapter, data)
    except SignalUnavailable as exc:
        raise unavailable(exc) from None
    raise ValueError(operation)


def age_verify(adapter, data: dict[str, Any]) -> dict[str, Any]:
    """Fails closed: only an explicit operator `true` verifies the age."""
    try:
        check = adapter.age_check(phone_number=data["phoneNumber"],
                                  age_threshold=data["ageThreshold"],
                                  attributes=_attributes(data))
    except SignalUnavailable:
        check = "not_available"
    return {"ageVerified": check == "true", "ageThreshold": data["ageThreshold"],
            "ageCheck": check}


def scam_assess(adapter, data: dict[str, Any]) -> dict[str, Any]:
    number = data.get("phoneNumber")
    if number is None:  # hashed: the sandbox knows its test numbers; an operator needs clear
        from .adapters import SandboxNetwork, sha256_number

        number = next((n for n in SandboxNetwork._KNOWN
                       if sha256_number(n) == data["hashedPhoneNumber"]), None)
    signals: dict[str, bool | None] = {}
    for name, call in (("active_call", adapter.active_call),
                       ("call_forwarding", adapter.call_forwarding),
                       ("sim_swap", lambda phone_number: adapter.sim_swap_check(
                           phone_number=phone_number, max_age_hours=24))):
        if number is None:
            signals[name] = None
            continue
        try:
            signals[name] = bool(call(phone_number=number))
        except SignalUnavailable:
            signals[name] = None
    hits = sum(1 for v in signals.values() if v)
    known = [v for v in signals.values() if v is not None]
    level = "unknown" if not known else ("high" if hits >= 2 else "medium" if hits else "low")
    return {"scam_signal_detected": hits > 0, "risk_level": level, "signals": signals}


def _fingerprint(data: dict[str, Any]) -> str:
    canonical = json.dumps({k: str(v) for k, v in sorted(data.items()) if k != "idempotencyKey"},
                           sort_keys=True)
    return hashlib.sha256(canonical.encode()).hexdigest()


def carrier_charge(*, principal: Principal, data: dict[str, Any], request=None
                   ) -> tuple[CarrierCharge, bool]:
    """Charge once per `idempotencyKey`: (charge, created). Above the cap: 422 first."""
    amount: Decimal = data["amount"]
    cap = conf.billing_cap()
    if amount > cap:
        raise APIError("CARRIER_BILLING_AMOUNT_ABOVE_CAP",
                       f"The amount is above this deployment's cap of {cap}.",
                       details={"max_amount": str(cap)})
    organization = principal.organization
    adapter = adapter_for(organization)
    key = data.get("idempotencyKey") or ""
    fingerprint = _fingerprint(data)
    if key:
        existing = CarrierCharge.objects.filter(idempotency_key=key).first()
        if existing is not None:
            if existing.request_fingerprint != fingerprint:
                raise APIError("IDEMPOTENCY_CONFLICT", "This idempotencyKey was used with a "
                               "different charge.")
            return existing, False
    correlator = key or f"{organization.pk}-{timezone.now().timestamp()}"
    try:
        charged = adapter.charge(phone_number=data["phoneNumber"], amount=amount,
                                 currency=data["currency"], description=data["description"],
                                 merchant_reference=data.get("merchantReference") or "",
                                 correlator=correlator)
    except SignalUnavailable as exc:
        raise unavailable(exc) from None
    try:
        with transaction.atomic():
            charge = CarrierCharge.objects.create(
                organization=organization, phone_number=data["phoneNumber"], amount=amount,
                currency=data["currency"], description=data["description"],
                merchant_reference=data.get("merchantReference") or "", idempotency_key=key,
                request_fingerprint=fingerprint, payment_id=charged.payment_id,
                status=charged.status)
            audit_record(action="carrier_billing.charged", principal=principal, target=charge,
                         request=request, metadata={"amount": str(amount),
                                                    "currency": data["currency"],
                                                    "status": charged.status})
    except IntegrityError:  # the same key raced in: answer the first charge
        return CarrierCharge.objects.get(idempotency_key=key), False
    return charge, True
