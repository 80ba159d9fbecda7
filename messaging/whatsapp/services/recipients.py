"""Who a WhatsApp request is about: a phone number (E.164 or national) or a contact id."""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone

from contacts.normalize import normalize_phone
from platform_core.errors import APIError, validation_error

from ..models import BlockedUser

WINDOW_HOURS = 24


def resolve(organization, value: str, *, field: str = "to") -> tuple[str, str | None]:
    """(E.164 phone, contact id or None) of `value`: `cnt_...` or a phone number."""
    from messaging.acceptance import contact_id_for

    text = str(value or "").strip()
    if not text:
        raise validation_error(field, f"{field} is required.")
    if text.startswith("cnt_"):
        from contacts.models import Contact

        contact = (Contact.objects.for_organization(organization).filter(pk=text[:40])
                   .only("id", "phone").first())
        if contact is None:
            raise validation_error(field, "No contact has this id.")
        if not contact.phone:
            raise validation_error(field, "The contact has no phone number.")
        return contact.phone, contact.pk
    phone = normalize_phone(text, default_country=organization.default_country, field=field)
    return phone, contact_id_for(organization.pk, "whatsapp", phone)


def is_blocked(organization, phone: str) -> bool:
    return BlockedUser.objects.for_organization(organization).filter(phone=phone).exists()


def refuse_blocked(organization, phone: str) -> None:
    if is_blocked(organization, phone):
        raise APIError("WHATSAPP_USER_BLOCKED", details={"to": phone})


def require_window(organization, phone: str, *, field: str = "to") -> None:
    """The customer-service window: the user wrote to us on WhatsApp in the last 24 hours."""
    from messaging.models import Message

    since = timezone.now() - timedelta(hours=WINDOW_HOURS)
    if not (Message.objects.for_organization(organization)
            .filter(from_address=phone, direction="inbound", channel="whatsapp",
                    created_at__gte=since).exists()):
        raise APIError("WHATSAPP_OUTSIDE_WINDOW", details={
            "to": phone, "issues": [{"field": field, "message":
                                     "No message from this user in the last 24 hours."}]})
