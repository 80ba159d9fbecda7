"""Received messages: `inbound_message_create` records one (contact, conversation,
keywords, `message.received`), whichever provider webhook or sandbox endpoint it came
through (`pipeline.py` parses and verifies; this stores)."""

from __future__ import annotations

from typing import Any

from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from platform_core.errors import APIError
from platform_core.events.bus import emit

from .. import acceptance, callbacks, validation
from ..models import Channel, Direction, Message, MessageStatus, MessagingService
from ..status import message_event


def service_for_address(organization, address: str) -> MessagingService | None:
    """The messaging service whose sender pool holds `address` (a business number)."""
    if not address:
        return None
    services = MessagingService.objects.for_organization(organization).order_by("pk")
    if connection.features.supports_json_field_contains:
        return services.filter(senders__contains=[{"from": address}]).first()
    # SQLite (the embedded default) has no JSON containment: an organization has few
    # services, look through their pools here.
    return next((service for service in services if service.holds_sender(address)), None)


def _normalize_address(channel: str, raw: str, default_country: str) -> str:
    text = validation.strip_channel_prefix(raw or "")
    if channel == Channel.EMAIL:
        from contacts.normalize import parse_email

        return parse_email(text) or text
    from contacts.normalize import parse_phone

    return parse_phone(text, default_country=default_country) or text


def _contact_for_inbound(organization, channel: str, address: str) -> str | None:
    from contacts.normalize import parse_email, parse_phone

    if channel == Channel.EMAIL:
        email, phone = parse_email(address), None
    else:
        email, phone = None, parse_phone(address, default_country=organization.default_country)
    if not email and not phone:
        return None
    existing = acceptance.contact_id_for(organization.pk, channel, email or phone)
    if existing:
        return existing
    from contacts.services import contact_create

    try:
        with transaction.atomic():
            return contact_create(organization=organization, principal=None, phone=phone,
                                  email=email).pk
    except (APIError, IntegrityError):  # created concurrently by another inbound message
        return acceptance.contact_id_for(organization.pk, channel, email or phone)


def _conversation_for_inbound(organization, contact_id: str | None, channel: str,
                              at, body: str = "") -> str | None:
    if not contact_id:
        return None
    try:
        from conversations.services import conversation_for_inbound
    except ImportError:
        return None
    conversation = conversation_for_inbound(organization=organization, contact_id=contact_id,
                                            channel=channel, at=at, body=body)
    return conversation.pk


def normalized_block(message: Message, *, received_at=None) -> dict[str, Any]:
    from platform_core.events.models import iso_z

    return {
        "channel": message.channel,
        "from": message.from_address,
        "to": message.to,
        "text": message.body,
        "media": [{"url": url} for url in message.media_urls],
        "contact_id": message.contact_id,
        "conversation_id": message.conversation_id,
        "received_at": iso_z(received_at or message.created_at),
    }


def inbound_message_create(
    *,
    organization,
    channel: str,
    from_: str,
    to: str,
    body: str,
    media_urls: list[str] | None = None,
    provider: str,
    provider_message_id: str | None = None,
    raw: dict | None = None,
) -> Message:
    """Record a received message: contact, conversation, keywords, `message.received`.

    Idempotent on (provider, provider_message_id): a provider's retried webhook returns the
    message stored the first time. STOP/START/HELP are handled by `keywords.handle_keywords`;
    the keyword and the auto-reply text (for the provider's webhook answer, e.g. TwiML) are
    kept in `metadata["keyword"]` and `metadata["auto_reply"]`. The event goes to the
    webhooks and, when the business address belongs to a messaging service with an
    `inbound_webhook_url`, to that URL too (signed like status callbacks).
    """
    from .. import keywords

    channel = validation.check_channel(channel)
    rows = Message.objects.for_organization(organization)
    if provider_message_id:
        existing = rows.filter(direction=Direction.INBOUND, provider=provider,
                               provider_message_id=provider_message_id).first()
        if existing is not None:
            return existing
    country = organization.default_country
    sender = _normalize_address(channel, from_, country)
    recipient = _normalize_address(channel, to, country)
    now = timezone.now()
    with transaction.atomic():
        service = service_for_address(organization, recipient)
        contact_id = _contact_for_inbound(organization, channel, sender)
        conversation_id = _conversation_for_inbound(organization, contact_id, channel, now,
                                                   body or "")
        message = Message(
            organization=organization, channel=channel, direction=Direction.INBOUND,
            to=recipient, from_address=sender, body=body or "", media_urls=list(media_urls or []),
            status=MessageStatus.RECEIVED, provider=provider,
            provider_message_id=provider_message_id, messaging_service=service,
            contact_id=contact_id, conversation_id=conversation_id, created_at=now,
            metadata={"raw": raw} if raw else {},
        )
        kind = keywords.handle_keywords(organization=organization, channel=channel,
                                        sender=sender, recipient=recipient, body=body or "",
                                        service=service)
        if kind:
            message.metadata["keyword"] = kind
            reply = keywords.reply_text(kind)
            if reply:
                message.metadata["auto_reply"] = reply
        message.save(force_insert=True)
        normalized = normalized_block(message, received_at=now)
        event_type, data = message_event(
            message, extra={"body": message.body, "media_urls": message.media_urls,
                            "contact_id": contact_id, "conversation_id": conversation_id,
                            "keyword": kind, "normalized": normalized})
        event = emit(organization=organization, type=event_type, data=data)
        emit(organization=organization, type="normalized.inbound",
             data={"message_id": message.pk, "event": "message.received", **normalized})
        if service is not None and service.inbound_webhook_url:
            callbacks.callbacks_enqueue([(organization.pk, event.pk,
                                          service.inbound_webhook_url, message.pk)])
    return message
