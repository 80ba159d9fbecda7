"""The one inbound pipeline: provider webhooks and `POST /api/v1/sandbox/inbound` both end
here.

- An `InboundItem` becomes an inbound message through
  `messaging.services.inbound_message_create`, which links the contact, creates or
  continues the conversation (one open thread per contact and channel), runs the STOP /
  START / HELP keywords and emits `message.received` with the normalized block.
  Providers retry webhooks, so an item whose provider message id was already received is
  skipped: a replayed webhook never makes a second message.
- A `ReceiptItem` moves the organization's outbound message with that provider message id
  through `messaging.services.message_apply_status`, which never moves a message
  backwards (an out-of-order receipt is ignored). A receipt for a message we do not know
  (another system's send on the same account) is ignored.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field

from django.core.cache import cache
from django.utils import timezone

from .items import InboundItem, ReceiptItem

logger = logging.getLogger("messaging.inbound")

_DEDUPE_SECONDS = 60


@dataclass
class Outcome:
    received: list = field(default_factory=list)  # messages created
    duplicates: int = 0
    receipts_applied: int = 0
    receipts_ignored: int = 0
    dropped: int = 0  # refused by a channel app's inbound filter (messaging.hooks)

    def summary(self) -> dict:
        summary = {"received": len(self.received), "duplicates": self.duplicates,
                   "receipts_applied": self.receipts_applied,
                   "receipts_ignored": self.receipts_ignored}
        if self.dropped:
            summary["dropped"] = self.dropped
        return summary


def _message_model():
    from messaging.models import Message

    return Message


def _seen_key(organization, item: InboundItem) -> str:
    return f"inbound:seen:{organization.pk}:{item.provider}:{item.provider_message_id}"


def _already_received(organization, item: InboundItem) -> bool:
    return (
        _message_model().objects.for_organization(organization)
        .filter(direction="inbound", provider=item.provider,
                provider_message_id=item.provider_message_id)
        .exists()
    )


def receive_message(*, organization, item: InboundItem):
    """Create the inbound message of `item` (None when it was received already).

    A short cache claim on the provider message id keeps two concurrent deliveries of the
    same webhook from both creating it; the claim is released when creation fails, so the
    provider's retry is processed.
    """
    from messaging import hooks
    from messaging.services import inbound_message_create

    if hooks.inbound_dropped(organization, item):
        return None
    key = None
    if item.provider_message_id:
        key = _seen_key(organization, item)
        if not cache.add(key, 1, _DEDUPE_SECONDS) or _already_received(organization, item):
            return None
    try:
        message = inbound_message_create(
            organization=organization, channel=item.channel, from_=item.from_, to=item.to,
            body=item.body, media_urls=list(item.media_urls), provider=item.provider,
            provider_message_id=item.provider_message_id, raw=item.raw or None,
        )
    except BaseException:
        if key:
            cache.delete(key)
        raise
    hooks.inbound_received(organization, message, item)
    return message


def apply_receipt(*, organization, item: ReceiptItem) -> bool:
    """Apply a delivery receipt. True when the message's status moved."""
    from messaging.services import message_apply_status

    message = (
        _message_model().objects.for_organization(organization)
        .filter(provider_message_id=item.provider_message_id, provider=item.provider,
                direction="outbound")
        .order_by("-created_at").first()
    )
    if message is None:
        logger.info("receipt for unknown %s message %s ignored", item.provider,
                    item.provider_message_id)
        return False
    moved = bool(message_apply_status(message=message, status=item.status,
                                      error_code=item.error_code,
                                      error_message=item.error_message))
    if str(item.raw.get("eventType") or "").upper() == "READ":
        _record_read(message)  # after the status write, which may save metadata
    return moved


def _record_read(message) -> None:
    """An RCS READ user event: `metadata.read_at` (the rcs analytics count it). One
    statement merging the key, so a concurrent status write keeps its own metadata keys."""
    from django.db import connection
    from django.db.models import F, Func, JSONField, Value

    read_at = timezone.now().isoformat()
    if connection.vendor != "postgresql":  # the embedded SQLite default: json_set
        _message_model().objects.filter(pk=message.pk).update(metadata=Func(
            F("metadata"), Value("$.read_at"), Value(read_at), function="json_set",
            output_field=JSONField()))
        return
    stamp = Value(json.dumps({"read_at": read_at}))
    _message_model().objects.filter(pk=message.pk).update(metadata=Func(
        F("metadata"), Func(stamp, function="", template="%(expressions)s::jsonb"),
        arg_joiner=" || ", template="(%(expressions)s)", output_field=JSONField()))


def process(*, organization, items: list[InboundItem | ReceiptItem]) -> Outcome:
    outcome = Outcome()
    for item in items:
        if isinstance(item, ReceiptItem):
            if apply_receipt(organization=organization, item=item):
                outcome.receipts_applied += 1
            else:
                outcome.receipts_ignored += 1
            continue
        from messaging import hooks

        if hooks.inbound_dropped(organization, item):
            outcome.dropped += 1
            continue
        message = receive_message(organization=organization, item=item)
        if message is None:
            outcome.duplicates += 1
        else:
            outcome.received.append(message)
    return outcome
