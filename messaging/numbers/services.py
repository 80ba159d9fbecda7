"""Writes of the numbers family: port-in requests."""

from __future__ import annotations

from datetime import date, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from django.db import transaction
from django.utils import timezone

from platform_core.audit.services import audit_record
from platform_core.errors import APIError
from platform_core.events.bus import emit
from platform_core.identity.principal import Principal
from platform_core.tenancy.models import Organization

from .loa import loa_file_for_url
from .models import ACTIVE_PORTING_STATUSES, PortingRequest, PortingStatus
from .payloads import porting_data

# Porting takes 7-14 business days (Document 2, 4.4).
PORTING_BUSINESS_DAYS = (7, 14)


def add_business_days(start: date, days: int) -> date:
    """`days` working days (Monday to Friday) after `start`."""
    current = start
    while days > 0:
        current += timedelta(days=1)
        if current.weekday() < 5:
            days -= 1
    return current


@transaction.atomic
def porting_request_submit(
    *,
    principal: Principal,
    numbers: list[str],
    current_carrier: str,
    country: str,
    authorized_signer: str,
    account_number: str,
    account_pin: str,
    loa_file_url: str,
    request=None,
) -> PortingRequest:
    """Store a port-in request as `submitted` (numbers already E.164 and deduplicated).

    The estimated completion window counts 7 and 14 business days (Monday to Friday) from
    today in the organization's time zone.
    """
    organization = principal.organization
    loa_file = loa_file_for_url(loa_file_url, organization=organization)
    rows = PortingRequest.objects.for_organization(organization)
    # One active request per number: submissions of an organization serialize on its row.
    Organization.objects.select_for_update().filter(pk=organization.pk).first()
    active = rows.filter(status__in=ACTIVE_PORTING_STATUSES)
    for existing in active.only("id", "numbers"):
        overlap = sorted(set(existing.numbers) & set(numbers))
        if overlap:
            raise APIError(
                "CONFLICT", "A porting request for these numbers is already in progress.",
                details={"porting_request_id": existing.pk, "numbers": overlap},
            )
    try:
        zone = ZoneInfo(organization.timezone or "UTC")
    except (ZoneInfoNotFoundError, ValueError):
        zone = ZoneInfo("UTC")
    today = timezone.localdate(timezone=zone)
    earliest, latest = (add_business_days(today, n) for n in PORTING_BUSINESS_DAYS)
    porting = rows.create(
        organization=organization, numbers=numbers, current_carrier=current_carrier,
        country=country, authorized_signer=authorized_signer, account_number=account_number,
        account_pin=account_pin, loa_file_id=loa_file.pk, loa_file_url=loa_file_url,
        status=PortingStatus.SUBMITTED, estimated_completion_earliest=earliest,
        estimated_completion_latest=latest, submitted_by=principal.actor_id,
    )
    audit_record(action="numbers.porting.submitted", principal=principal, target=porting,
                 request=request, metadata={"numbers": numbers, "country": country,
                                            "loa_file_id": loa_file.pk})
    emit(organization=organization, type="number.porting.submitted", data=porting_data(porting))
    return porting
