"""The status lifecycle of a message: the one way a status moves, for one message or a batch.

    scheduled -> queued -> sent -> delivered
                             \\-> undelivered | failed | expired
    scheduled -> canceled                  inbound: received

A move is monotonic (`models.STATUS_RANK`): a late `sent` after `delivered` is dropped and
nothing leaves a terminal status. Each move stamps its time, emits its event (failures,
`failed` / `undelivered` / `expired`, emit `message.failed` with `data.status` telling
which, Document 1, 2.3) and sends the event to the message's `status_callback`. A message
whose acceptance event was not emitted yet (the dispatcher had not reached it) gets it
first, so the events of a message always start with its acceptance.

`StatusBatch` is the batch form every background pass uses: it takes rows locked by the
caller (`lock`), moves them in memory (a message may move twice, `sent` then `delivered`,
in one batch: its events keep that order), then `write()` stores every row in one
statement (messaging/bulk.py), records every event in one INSERT (`emit_batch`), queues
the status callbacks once (`callbacks_enqueue`), moves the broadcasts' counters once per
broadcast and fires the fallbacks of failed messages. A broadcast's message also moves its
recipient row and the broadcast's counters in the same transaction.
`message_apply_status` is the same for one message (provider receipts, the API).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from datetime import timedelta
from typing import Any

from django.db import transaction
from django.utils import timezone

from platform_core.events.bus import emit, emit_batch
from platform_core.webhooks.payloads import message_event_data

from . import callbacks
from .bulk import bulk_write
from .models import FAILURE_STATUSES, STATUS_RANK, TERMINAL_STATUSES, Message, MessageStatus

logger = logging.getLogger("messaging")

MESSAGE_FAILED = "message.failed"
# Provider vocabulary folded into the lifecycle (Twilio's `accepted`/`sending`, WhatsApp's
# `read`, which implies delivery).
STATUS_ALIASES = {"accepted": "queued", "sending": "queued", "read": "delivered",
                  "undeliverable": "undelivered"}
_TIMESTAMP_FIELD = {
    MessageStatus.SENT: "sent_at",
    MessageStatus.DELIVERED: "delivered_at",
    MessageStatus.FAILED: "failed_at",
    MessageStatus.UNDELIVERED: "failed_at",
    MessageStatus.EXPIRED: "failed_at",
    MessageStatus.CANCELED: "canceled_at",
}
# What a batch may change on a row; `write()` stores those that moved on any of its rows.
WRITTEN_FIELDS = ("status", "error_code", "error_message", "provider", "provider_message_id",
                  "sent_at", "delivered_at", "failed_at", "canceled_at", "fallback_due_at",
                  "announced_at", "dispatched_at", "retry_at", "send_attempts", "secret_body")


# --- Events --------------------------------------------------------------------------------


def event_type_for(status: str) -> str:
    return MESSAGE_FAILED if status in FAILURE_STATUSES else f"message.{status}"


def message_event(message: Message, status: str | None = None, *,
                  extra: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
    """The event type and data of `message` in `status` (its current one by default)."""
    status = status or message.status
    event_type = event_type_for(status)
    data = message_event_data(
        event_type,
        message_id=message.pk,
        channel=message.channel,
        sender=message.from_address or None,
        recipient=message.to,
        status=status,
        error_code=message.error_code,
        error_message=message.error_message,
        extra={
            "direction": message.direction,
            "messaging_service_id": message.messaging_service_id,
            "parent_message_id": message.parent_id,
            # A broadcast's messages name their campaign (absent on other messages).
            **({"campaign_id": message.campaign_id} if message.campaign_id else {}),
            # A WhatsApp marketing message echoes its tracking id on every status event.
            **({"tracking_id": message.metadata["tracking_id"]}
               if (message.metadata or {}).get("tracking_id") else {}),
            **(extra or {}),
        },
    )
    return event_type, data


def initial_status(message: Message) -> str:
    """The status a message was accepted in: its acceptance event's."""
    return MessageStatus.SCHEDULED if message.send_at else MessageStatus.QUEUED


def emit_status(message: Message, *, status: str | None = None) -> None:
    """Emit one message's event now (with its status callback): a message created and
    announced at once (a fallback child)."""
    event_type, data = message_event(message, status)
    event = emit(organization=message.organization, type=event_type, data=data)
    if message.status_callback:
        callbacks.callbacks_enqueue([(message.organization_id, event.pk,
                                      message.status_callback, message.pk)])


# --- The secret copy of a redacted message -----------------------------------------------


def release_secret(message: Message, *, handed_over: bool = False) -> None:
    """Drop the secret copy once no send can need it (stored by the batch's write): it is
    kept while the message waits for (or is between) provider calls, and while a fallback
    may still copy it to its child (fallback.py drops it then). `handed_over`: the
    provider accepted the message (a live `queued` answer), no call of ours is left."""
    if message.secret_body is None:
        return
    waiting = (message.status in (MessageStatus.SCHEDULED, MessageStatus.QUEUED)
               and not handed_over)
    fallback_pending = (bool(message.fallback) and message.fallback_triggered_at is None
                        and message.status not in (MessageStatus.DELIVERED,
                                                   MessageStatus.CANCELED))
    if not waiting and not fallback_pending:
        message.secret_body = None


# --- Locking -------------------------------------------------------------------------------


def lock(ids: Iterable[str], *, organization=None) -> dict[str, Message]:
    """Lock the messages `ids` (in id order: two batches never deadlock) in the current
    transaction; those that exist, by id. `organization` scopes the read when given."""
    rows = (Message.objects.for_organization(organization) if organization is not None
            else Message.objects.dangerously_unscoped())
    return {m.pk: m for m in rows.select_for_update(of=("self",)).select_related("organization")
            .filter(pk__in=list(ids)).order_by("pk")}


# --- The batch -----------------------------------------------------------------------------


class StatusBatch:
    """Moves of locked rows, written together by `write()` (in the caller's transaction)."""

    def __init__(self, rows: Iterable[Message]) -> None:
        self.rows: dict[str, Message] = {m.pk: m for m in rows}
        # What each row held when locked: `write()` stores only the columns that moved.
        self._loaded = {pk: _values(m) for pk, m in self.rows.items()}
        self._changed: dict[str, Message] = {}
        self.now = timezone.now()
        self._events: list[tuple[Message, str, dict[str, Any]]] = []
        self._moves: list[tuple[Message, str, str]] = []
        self._fallbacks: list[tuple[Message, str]] = []

    def touch(self, message: Message) -> None:
        """Mark a row changed by the caller (its other fields in WRITTEN_FIELDS)."""
        self._changed[message.pk] = message

    def announce(self, message: Message) -> None:
        """Emit the acceptance event of a message not announced yet."""
        if message.announced_at is None:
            self._event(message, initial_status(message))
            message.announced_at = self.now
            self.touch(message)

    def move(self, message: Message, status: str, *, error_code: str | None = None,
             error_message: str | None = None, provider_message_id: str | None = None) -> bool:
        """Move `message` (one of this batch's rows) to `status` if that is forward; False
        when ignored. A new `provider_message_id` is recorded either way."""
        status = STATUS_ALIASES.get(status, status)
        if status not in STATUS_RANK:
            logger.warning("status %r for message %s is not a lifecycle status; ignored",
                           status, message.pk)
            return False
        if provider_message_id and message.provider_message_id != provider_message_id:
            message.provider_message_id = provider_message_id
            self.touch(message)
        if (message.status in TERMINAL_STATUSES
                or STATUS_RANK[status] <= STATUS_RANK[message.status]):
            if status == MessageStatus.DELIVERED and message.fallback_triggered_at is not None:
                logger.info("late delivery receipt of %s after its fallback went out",
                            message.pk)
            return False
        self.announce(message)
        self.touch(message)
        previous = message.status
        message.status = status
        if status in FAILURE_STATUSES:
            message.error_code = str(error_code)[:64] if error_code not in (None, "") else None
            message.error_message = (str(error_message)[:1000]
                                     if error_message not in (None, "") else None)
        else:  # a successful transition clears a captured error (Document 1, 2.3)
            message.error_code = message.error_message = None
        stamp = _TIMESTAMP_FIELD.get(status)
        if stamp and getattr(message, stamp) is None:
            setattr(message, stamp, self.now)
        if status == MessageStatus.DELIVERED and message.sent_at is None:
            message.sent_at = self.now  # the receipt came before (or instead of) the result
        if status in TERMINAL_STATUSES:
            message.fallback_due_at = None
        elif (status == MessageStatus.SENT and message.fallback
              and message.fallback_triggered_at is None and message.fallback_due_at is None):
            message.fallback_due_at = self.now + timedelta(
                seconds=message.fallback_after_seconds)
        self._event(message, status)
        if message.campaign_id:
            self._moves.append((message, previous, status))
        if status in FAILURE_STATUSES and message.fallback:
            self._fallbacks.append((message, status))
        return True

    def _event(self, message: Message, status: str) -> None:
        # Built now: a later move of the same message in this batch must not change it.
        event_type, data = message_event(message, status)
        self._events.append((message, event_type, data))

    def write(self) -> None:
        """Store the rows (a secret copy no send needs any more dropped in the same
        statement), record the events, queue the callbacks, move the broadcasts' counters
        and fire the fallbacks of failed messages."""
        changed = list(self._changed.values())
        for message in changed:
            release_secret(message)
        fields = sorted({field for m in changed
                         for field, before, now in zip(WRITTEN_FIELDS, self._loaded.get(
                             m.pk, (None,) * len(WRITTEN_FIELDS)), _values(m), strict=True)
                         if before != now})
        if fields:
            for message in changed:
                message.updated_at = self.now
            bulk_write(Message, changed, [*fields, "updated_at"])
        events = emit_batch([(m.organization, event_type, data)
                             for m, event_type, data in self._events])
        callbacks.callbacks_enqueue([
            (m.organization_id, event.pk, m.status_callback, m.pk)
            for (m, _type, _data), event in zip(self._events, events, strict=True)
            if m.status_callback])
        if self._moves:
            from .broadcasts.services import on_messages_transition

            on_messages_transition(self._moves)
        if self._fallbacks:
            from .fallback import fallback_fire

            for message, reason in self._fallbacks:
                fallback_fire(message, reason=reason)


def _values(message: Message) -> tuple:
    return tuple(getattr(message, field) for field in WRITTEN_FIELDS)


# --- One message ---------------------------------------------------------------------------


def message_apply_status(
    *,
    message: Message,
    status: str,
    error_code: str | None = None,
    error_message: str | None = None,
    provider_message_id: str | None = None,
) -> bool:
    """Move `message` to `status` if that is forward in the lifecycle; False when ignored.

    Out-of-order or repeated receipts never move a message backwards. A new
    `provider_message_id` is recorded either way. The passed instance is refreshed with the
    stored state. Provider words are folded in (`STATUS_ALIASES`); anything else is ignored.
    """
    if STATUS_ALIASES.get(status, status) not in STATUS_RANK:
        logger.warning("status %r for message %s is not a lifecycle status; ignored", status,
                       message.pk)
        return False
    with transaction.atomic():
        current = lock([message.pk], organization=message.organization)[message.pk]
        batch = StatusBatch([current])
        moved = batch.move(current, status, error_code=error_code,
                           error_message=error_message, provider_message_id=provider_message_id)
        batch.write()
    refresh(message, current)
    return moved


def apply_status_to(messages: Sequence[Message], status: str, *, error_code: str | None = None,
                    error_message: str | None = None) -> int:
    """Move locked `messages` to `status` together (the timed sweeps); the number moved."""
    batch = StatusBatch(messages)
    moved = sum(batch.move(m, status, error_code=error_code, error_message=error_message)
                for m in messages)
    batch.write()
    return moved


def refresh(target: Message, source: Message) -> None:
    for field in source._meta.concrete_fields:
        setattr(target, field.attname, getattr(source, field.attname))
