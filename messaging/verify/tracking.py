"""A verification follows its message: the message status events (fan-out handler
`verify_delivery`, registered in apps.py) move it from `pending` to `sent` when the
message (or a fallback child of it) is handed to the carrier, and to `failed` when the
delivery fails with no fallback left; each move emits its `verification.*` event.

Batch-friendly: for a claimed batch of events, one read of the messages named by the
relevant events, one locked read of their open verifications, one bulk UPDATE and one
`emit_batch`. The verify messages carry `metadata.verification_id` (copied to fallback
children by messaging/fallback.py). Delivery is at least once and the moves only leave
open statuses, so a replayed event changes nothing.
"""

from __future__ import annotations

from typing import Any

from django.db import transaction

from messaging.models import Message
from platform_core.events.bus import emit_batch

from . import delivery
from .models import OPEN_STATUSES, Status, Verification

HANDLED = frozenset({"message.queued", "message.sent", "message.delivered", "message.failed"})
_FIELDS = ["status", "sent_at", "ended_at", "cancel_reason", "message_id", "channel",
           "updated_at"]


def handle_one(event) -> None:
    handle_batch([event])


def handle_batch(events: list) -> None:
    relevant = [e for e in events if e.type in HANDLED and (e.data or {}).get("message_id")]
    if not relevant:
        return
    messages = {m.pk: m for m in Message.objects.dangerously_unscoped()
                .filter(pk__in={e.data["message_id"] for e in relevant},
                        metadata__has_key="verification_id")
                .only("id", "organization_id", "channel", "fallback", "metadata")}
    owners = {pk: (m.metadata or {}).get("verification_id") for pk, m in messages.items()}
    wanted = {v for v in owners.values() if v}
    if not wanted:
        return
    with transaction.atomic():
        verifications = {v.pk: v for v in Verification.objects.dangerously_unscoped()
                         .filter(pk__in=wanted, status__in=OPEN_STATUSES)
                         .select_related("organization").select_for_update(of=("self",))
                         .order_by("pk")}
        changed: dict[str, Verification] = {}
        moves: list[tuple[Verification, dict[str, Any]]] = []
        for event in sorted(relevant, key=lambda e: (e.created_at, e.pk)):
            message = messages.get(event.data["message_id"])
            verification = verifications.get(owners.get(event.data["message_id"]) or "")
            if message is None or verification is None:
                continue
            if verification.status not in OPEN_STATUSES:
                continue
            extra = _apply(verification, message, event)
            changed[verification.pk] = verification
            if extra is not None:
                moves.append((verification, extra))
        if changed:
            Verification.objects.dangerously_unscoped().bulk_update(list(changed.values()),
                                                                    _FIELDS)
        if moves:
            from .services import _event

            emit_batch([_event(v, **extra) for v, extra in moves])


def _follow(verification: Verification, message: Message) -> None:
    """The verification now waits on `message` (a fallback child of its first one)."""
    verification.message_id = message.pk
    if verification.channel != delivery.LINK_CHANNEL:
        verification.channel = message.channel


def _apply(verification: Verification, message: Message, event) -> dict[str, Any] | None:
    """Move `verification` for `event` of `message`; the event's extra data when it moved."""
    data = event.data or {}
    if event.type == "message.queued":
        if data.get("parent_message_id"):
            _follow(verification, message)
        return None
    if event.type in ("message.sent", "message.delivered"):
        _follow(verification, message)
        if verification.status != Status.PENDING:
            return None
        verification.status, verification.sent_at = Status.SENT, event.created_at
        return {"message_id": message.pk}
    # message.failed: final only when no fallback will carry the code on.
    outcome = (message.metadata or {}).get("fallback") or {}
    if message.fallback and not outcome.get("skipped"):
        return None
    if verification.message_id and verification.message_id != message.pk:
        return None  # an earlier message of the chain; a later one carries the code
    verification.status, verification.ended_at = Status.FAILED, event.created_at
    verification.cancel_reason = "delivery_failed"
    return {"message_id": message.pk, "reason": "delivery_failed",
            **{k: data[k] for k in ("error_code", "error_message") if data.get(k)}}
