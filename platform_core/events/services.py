"""Writes of the events family: product-event ingestion and event-sink configuration."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import orjson
import phonenumbers
from django.apps import apps
from django.core.exceptions import FieldError, ValidationError
from django.core.validators import validate_email
from django.db import transaction
from django.utils import timezone

from platform_core.audit.services import audit_record
from platform_core.errors import APIError, validation_error
from platform_core.identity.principal import Principal
from platform_core.net.ssrf import UnsafeTarget, check_url

from .bus import emit
from .models import EventSink, SinkKind, TrackedEvent

MAX_PROPERTIES_BYTES = 1_048_576

# Event names only the platform itself records (an app's own movements, such as loyalty's
# redemptions and adjustments): `/events/track` refuses them, so an `events:write` key
# cannot credit or debit through the back door. Apps reserve their prefix in ready().
_reserved_prefixes: set[str] = set()


def reserve_tracked_event_prefix(prefix: str) -> None:
    _reserved_prefixes.add(prefix)


def is_reserved_event_name(name: str) -> bool:
    return any(name.startswith(prefix) for prefix in _reserved_prefixes)


# --- Ingestion (Document 1, 4.6 and 6.3) -------------------------------------------------


def normalize_email(raw: str) -> str:
    email = raw.strip().lower()
    try:
        validate_email(email)
    except ValidationError:
        raise validation_error("contact_email", "Enter a valid email address.") from None
    return email


def normalize_phone(raw: str, *, default_country: str) -> str:
    """E.164, national numbers read with the organization's default country."""
    try:
        number = phonenumbers.parse(raw.strip(), (default_country or "US").upper())
    except phonenumbers.NumberParseException:
        number = None
    if number is None or not phonenumbers.is_valid_number(number):
        raise validation_error("contact_phone", "Enter a valid phone number (E.164 or national).")
    return phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.E164)


def properties_size(properties: dict[str, Any]) -> int:
    """Size of the serialized (compact JSON) properties, the quantity the 1 MiB rule limits."""
    return len(orjson.dumps(properties, option=orjson.OPT_NON_STR_KEYS))


def find_contact_id(*, organization, email: str, phone: str) -> str | None:
    """The contact this event belongs to, by email then phone, once the contacts app has
    its model; until then events are stored unlinked and linked by the contacts app."""
    try:
        contact = apps.get_model("contacts", "Contact")
    except LookupError:
        return None
    rows = contact.objects.for_organization(organization)
    try:
        for field, value in (("email", email), ("phone", phone)):
            if value:
                found = rows.filter(**{field: value}).values_list("pk", flat=True).first()
                if found:
                    return str(found)
    except FieldError:
        return None
    return None


def tracked_event_record(
    *,
    organization,
    name: str,
    properties: dict[str, Any] | None = None,
    contact_email: str = "",
    contact_phone: str = "",
    occurred_at: datetime | None = None,
) -> TrackedEvent:
    """Store one product event; above 1 MiB of properties nothing is stored (413)."""
    properties = properties or {}
    if properties_size(properties) > MAX_PROPERTIES_BYTES:
        raise APIError(
            "EVENT_PAYLOAD_TOO_LARGE",
            details={"limit_bytes": MAX_PROPERTIES_BYTES, "field": "properties"},
        )
    email = normalize_email(contact_email) if contact_email else ""
    phone = (
        normalize_phone(contact_phone, default_country=organization.default_country)
        if contact_phone else ""
    )
    return TrackedEvent.objects.for_organization(organization).create(
        organization=organization,
        name=name,
        properties=properties,
        contact_email=email,
        contact_phone=phone,
        contact_id=find_contact_id(organization=organization, email=email, phone=phone),
        occurred_at=occurred_at or timezone.now(),
    )


# --- Event sinks (Document 1, 2.6 and 4.7) ---------------------------------------------------


def event_sink_get(*, organization, kind: str) -> EventSink:
    """The stored configuration, or the default (disabled, unsaved) one."""
    sink = EventSink.objects.for_organization(organization).filter(kind=kind).first()
    return sink or EventSink(organization=organization, kind=kind, destination={"kind": kind})


def _check_sink(sink: EventSink) -> None:
    if sink.destination.get("kind") != sink.kind:
        raise validation_error("destination.kind", f"destination.kind must be `{sink.kind}`.")
    if sink.url:
        if sink.kind != SinkKind.HTTP_BATCH:
            raise validation_error("url", "url applies to http_batch sinks only.")
        try:
            check_url(sink.url, schemes=("https",))
        except UnsafeTarget as exc:
            raise validation_error("url", f"The collector URL is refused: {exc}.") from None
    if sink.enabled and sink.kind == SinkKind.HTTP_BATCH and not sink.url:
        raise validation_error("url", "An enabled http_batch sink needs a collector url.")


@transaction.atomic
def event_sink_update(
    *, organization, kind: str, changes: dict[str, Any], principal: Principal | None = None,
    request=None,
) -> EventSink:
    """Merge write: only the fields in `changes` change; `credentials=""` clears the secret."""
    sink = (
        EventSink.objects.for_organization(organization).select_for_update()
        .filter(kind=kind).first()
    ) or EventSink(organization=organization, kind=kind, destination={"kind": kind})
    for field, value in changes.items():
        if field in ("url", "credentials") and value is None:
            value = ""
        setattr(sink, field, value)
    _check_sink(sink)
    sink.save()
    changed = sorted(changes)
    audit_record(
        action="event_sink.updated", organization=organization, principal=principal,
        target=sink, request=request, metadata={"kind": kind, "fields": changed},
    )
    emit(organization=organization, type="event_sink.updated",
         data={"kind": kind, "enabled": sink.enabled, "fields": changed})
    return sink
