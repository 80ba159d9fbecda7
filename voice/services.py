"""Writes on IVR flows: drafts, publish, number bindings; the provider's call steps."""

from __future__ import annotations

import phonenumbers
from django.db import IntegrityError, transaction
from django.utils import timezone

from platform_core.audit.services import audit_record
from platform_core.errors import APIError, validation_error
from platform_core.events.bus import emit
from platform_core.identity.principal import Principal

from . import validation
from .models import IvrFlow, IvrFlowVersion, IvrNumber

MAX_NUMBERS = 20


def clean_numbers(raw: list[str]) -> list[str]:
    numbers: list[str] = []
    for i, text in enumerate(raw):
        try:
            parsed = phonenumbers.parse(text, None) if text.startswith("+") else None
        except phonenumbers.NumberParseException:
            parsed = None
        if parsed is None or not phonenumbers.is_valid_number(parsed):
            raise validation_error(f"phone_numbers[{i}]", "Not a valid E.164 number.")
        e164 = phonenumbers.format_number(parsed, phonenumbers.PhoneNumberFormat.E164)
        if e164 not in numbers:
            numbers.append(e164)
    return numbers


def _bind(flow: IvrFlow, numbers: list[str]) -> None:
    taken = IvrNumber.objects.filter(phone_number__in=numbers).exclude(flow=flow).first()
    if taken is not None:
        raise APIError("CONFLICT", f"{taken.phone_number} already answers flow {taken.flow_id}.",
                       details={"phone_number": taken.phone_number, "flow_id": taken.flow_id})
    IvrNumber.objects.filter(flow=flow).exclude(phone_number__in=numbers).delete()
    have = set(IvrNumber.objects.filter(flow=flow).values_list("phone_number", flat=True))
    try:
        with transaction.atomic():
            IvrNumber.objects.bulk_create([
                IvrNumber(organization=flow.organization, flow=flow, phone_number=n)
                for n in numbers if n not in have])
    except IntegrityError:  # bound by a concurrent request meanwhile
        raise APIError("CONFLICT", "A number is already bound to another flow.") from None


def flow_create(*, principal: Principal, name: str, active: bool, definition: dict,
                phone_numbers: list[str] | None = None, request=None) -> IvrFlow:
    definition = validation.validate(definition)
    with transaction.atomic():
        flow = IvrFlow.objects.create(organization=principal.organization, name=name,
                                      active=active, definition=definition,
                                      created_by=principal.actor_id)
        _bind(flow, clean_numbers(phone_numbers or []))
        audit_record(action="ivr_flow.created", principal=principal, target=flow,
                     request=request)
    return flow


def flow_update(*, principal: Principal, flow: IvrFlow, request=None, **changes) -> IvrFlow:
    if "definition" in changes:
        changes["definition"] = validation.validate(changes["definition"])
    numbers = changes.pop("phone_numbers", None)
    with transaction.atomic():
        for name, value in changes.items():
            setattr(flow, name, value)
        flow.save()
        if numbers is not None:
            _bind(flow, clean_numbers(numbers))
        audit_record(action="ivr_flow.updated", principal=principal, target=flow,
                     request=request, metadata={"fields": sorted(changes)})
    return flow


def flow_delete(*, principal: Principal, flow: IvrFlow, request=None) -> None:
    with transaction.atomic():
        audit_record(action="ivr_flow.deleted", principal=principal, target=flow,
                     request=request)
        flow.delete()


def flow_publish(*, principal: Principal, flow: IvrFlow, request=None) -> IvrFlowVersion:
    definition = validation.validate(flow.definition)
    with transaction.atomic():
        locked = IvrFlow.objects.select_for_update().get(pk=flow.pk)
        locked.version += 1
        locked.published_at = timezone.now()
        locked.save(update_fields=["version", "published_at", "updated_at"])
        published = IvrFlowVersion.objects.create(
            organization=locked.organization, flow=locked, version=locked.version,
            definition=definition, published_by=principal.actor_id,
            published_at=locked.published_at)
        audit_record(action="ivr_flow.published", principal=principal, target=locked,
                     request=request, metadata={"version": locked.version})
        emit(organization=locked.organization, type="ivr_flow.published",
             data={"flow_id": locked.pk, "version": locked.version})
    flow.version, flow.published_at = locked.version, locked.published_at
    return published
