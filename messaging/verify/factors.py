"""TOTP factors (authenticator apps, RFC 6238 through pyotp): 6 digits, 30-second steps.

Create answers the `otpauth://` URI (issuer: the organization's name) and the base32
secret once; the secret is kept encrypted at rest. Verify accepts the code of the current
step or one step either side, compared in constant time, and never the same step twice:
the highest accepted step is recorded under the row lock, so a code (or an older one)
replayed is refused with 409 `TOTP_CODE_REPLAYED`.
"""

from __future__ import annotations

import hmac

import pyotp
from django.db import transaction
from django.utils import timezone

from platform_core.audit.services import audit_record
from platform_core.errors import APIError
from platform_core.events.bus import emit
from platform_core.identity.principal import Principal

from .models import TotpFactor

DIGITS = 6
PERIOD = 30
WINDOW = 1  # steps accepted either side of the current one (clock drift)


def _event_data(factor: TotpFactor) -> dict:
    return {"factor_id": factor.pk, "factor_type": "totp", "identity": factor.identity,
            "status": factor.status}


def provisioning_uri(factor: TotpFactor) -> str:
    return pyotp.TOTP(factor.secret, digits=DIGITS, interval=PERIOD).provisioning_uri(
        name=factor.friendly_name or factor.identity, issuer_name=factor.organization.name)


def factor_create(*, organization, principal: Principal | None, identity: str,
                  friendly_name: str = "", request=None) -> TotpFactor:
    with transaction.atomic():
        factor = TotpFactor.objects.create(
            organization=organization, identity=identity, friendly_name=friendly_name,
            secret=pyotp.random_base32())
        audit_record(action="verify_factor.created", principal=principal, target=factor,
                     request=request)
        emit(organization=organization, type="factor.created", data=_event_data(factor))
    return factor


def factor_verify(*, factor: TotpFactor, code: str) -> tuple[TotpFactor, bool]:
    """Whether `code` is valid now; the first valid code also marks the factor verified."""
    with transaction.atomic():
        row = TotpFactor.objects.for_organization(factor.organization).select_for_update() \
            .get(pk=factor.pk)
        totp = pyotp.TOTP(row.secret, digits=DIGITS, interval=PERIOD)
        now = timezone.now()
        current = int(now.timestamp()) // PERIOD
        step = next((s for s in range(current - WINDOW, current + WINDOW + 1)
                     if hmac.compare_digest(totp.at(s * PERIOD), code)), None)
        if step is None:
            return row, False
        if row.last_used_step is not None and step <= row.last_used_step:
            raise APIError("TOTP_CODE_REPLAYED", details={"factor_id": row.pk})
        row.last_used_step = step
        first = row.status != "verified"
        if first:
            row.status, row.verified_at = "verified", now
        row.save(update_fields=["last_used_step", "status", "verified_at"])
        emit(organization=row.organization, type="factor.verified" if first
             else "factor.challenge_approved", data=_event_data(row))
    return row, True


def factor_delete(*, factor: TotpFactor, principal: Principal | None, request=None) -> None:
    with transaction.atomic():
        audit_record(action="verify_factor.deleted", principal=principal, target=factor,
                     request=request)
        emit(organization=factor.organization, type="factor.deleted",
             data=_event_data(factor))
        factor.delete()
