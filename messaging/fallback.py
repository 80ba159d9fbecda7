"""Fallback chains: a message with a `fallback` list sends a child message on the next
channel when it fails (at once, from its status batch) or when it is `sent` without a
delivery receipt within `fallback_after_seconds` (the timed drain, messaging/timed.py).

The trigger runs under the row lock of the message it falls back from and is recorded in
`fallback_triggered_at`, so it fires once; nothing is sent once any message of the chain
is delivered. A late receipt of the primary is recorded and sends nothing.
"""

from __future__ import annotations

import logging
from typing import Any

from django.db import transaction
from django.utils import timezone

from platform_core.errors import APIError

from . import dispatcher, validation
from .models import Channel, Direction, Message, MessageStatus
from .providers import registry
from .sending.senders import opt_out_for, opted_out_error, resolve_sender_with
from .status import emit_status

logger = logging.getLogger("messaging")


def chain_delivered(message: Message) -> bool:
    """Whether any message of `message`'s chain (root and its fallbacks) was delivered."""
    rows = Message.objects.for_organization(message.organization)
    root = message
    while root.parent_id is not None:
        parent = rows.filter(pk=root.parent_id).only("pk", "parent_id", "status").first()
        if parent is None:
            break
        root = parent
    level = [root.pk]
    seen: set[str] = set()
    while level:
        if rows.filter(pk__in=level, status=MessageStatus.DELIVERED).exists():
            return True
        seen.update(level)
        level = [pk for pk in rows.filter(parent_id__in=level).values_list("pk", flat=True)
                 if pk not in seen]
    return False


def fallback_fire(message: Message, *, reason: str) -> Message | None:
    """Send the next channel of `message`'s chain. `message` is locked by the caller."""
    if not message.fallback or message.fallback_triggered_at is not None:
        return None
    now = timezone.now()
    message.fallback_triggered_at = now
    message.fallback_due_at = None
    outcome: dict[str, Any] = {"reason": reason}
    child = None
    if chain_delivered(message):
        outcome["skipped"] = "chain_delivered"
    else:
        try:
            child = fallback_child(message)
            outcome["child_id"] = child.pk
        except APIError as exc:
            outcome["skipped"] = exc.code
            logger.info("fallback of %s not sent: %s", message.pk, exc)
    message.metadata = {**message.metadata, "fallback": outcome}
    fields = ["fallback_triggered_at", "fallback_due_at", "metadata", "updated_at"]
    if message.secret_body is not None:  # the child holds it now (or no send needs it)
        message.secret_body = None
        fields.append("secret_body")
    message.save(update_fields=fields)
    return child


def fallback_child(parent: Message) -> Message:
    organization = parent.organization
    channel, rest = parent.fallback[0], list(parent.fallback[1:])
    body, media = parent.body, list(parent.media_urls)
    secret_body = parent.secret_body
    if media and channel == Channel.SMS:
        if validation.is_nanp(parent.to):
            channel = Channel.MMS
        else:
            body = "\n".join([body, *media]).strip()
            if secret_body is not None:
                secret_body = "\n".join([secret_body, *media]).strip()
            media = []
    if media and channel == Channel.VOICE:
        media = []
    provider, account = registry.provider_for(organization, channel)
    service = parent.messaging_service
    explicit = None
    if parent.from_address and service is None:
        try:
            explicit = validation.normalize_sender(
                channel, parent.from_address, default_country=organization.default_country)
        except APIError:
            explicit = None
    sender = resolve_sender_with(organization=organization, channel=channel, explicit=explicit,
                             service=service if service and service.senders_for(channel)
                             else None,
                             recipient=parent.to, account=account)
    opted = opt_out_for(organization=organization, channel=channel, recipient=parent.to,
                        sender=sender, messaging_service_id=parent.messaging_service_id)
    if opted is not None:
        raise opted_out_error(opted, parent.to)
    child = Message.objects.for_organization(organization).create(
        organization=organization, channel=channel, direction=Direction.OUTBOUND,
        to=parent.to, from_address=sender, body=body, secret_body=secret_body,
        media_urls=media,
        subject=parent.subject, template_name=parent.template_name, language=parent.language,
        variables=parent.variables, status=MessageStatus.QUEUED, provider=provider.name,
        messaging_service=parent.messaging_service, contact_id=parent.contact_id,
        conversation_id=parent.conversation_id, status_callback=parent.status_callback,
        shorten_links=parent.shorten_links, fallback=rest,
        fallback_after_seconds=parent.fallback_after_seconds, parent=parent,
        created_at=timezone.now(),
        # Verify follows a code's delivery down the chain by this key.
        metadata={k: parent.metadata[k] for k in ("verification_id",)
                  if k in (parent.metadata or {})},
    )
    emit_status(child)
    transaction.on_commit(dispatcher.kick)  # the send drain claims it
    return child
