"""Writes of conversations: the thread of a contact on a channel, and the lifecycle verbs.

`conversation_for_inbound` is what the inbound pipeline calls for every received message
(messaging contract); `conversation_open` backs `POST /api/v1/conversations`. Both go
through `_open_or_continue`, which is safe under concurrency without locks: the new row is
inserted with `INSERT ... ON CONFLICT DO NOTHING` against the partial unique index of live
threads, then the live thread of the pair is read back. Whoever inserted first wins; the
others continue that thread. Only the winner emits `conversation.created`.

Each verb locks the row (`SELECT ... FOR UPDATE`), checks the transition, writes, and
records the activity row and event (`activity.record`) in one transaction. Routing
counters move with the assignment (`routing.hold` / `routing.release`).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.db import transaction
from django.utils import timezone

from platform_core.audit.services import audit_record
from platform_core.errors import APIError, validation_error
from platform_core.events.bus import emit
from platform_core.identity.principal import Principal

from . import ai, routing
from .activity import record
from .models import (
    LIVE_STATUSES,
    PRIORITY_RANK,
    AssignmentStatus,
    Conversation,
    ConversationStatus,
    Priority,
)
from .payloads import conversation_data

MAX_TAGS = 50


def _open_or_continue(
    *, organization, contact_id: str, channel: str, last_message_at: datetime | None = None,
    defaults: dict[str, Any] | None = None,
) -> tuple[Conversation, bool]:
    rows = Conversation.objects.for_organization(organization)
    existing = rows.filter(contact_id=contact_id, channel=channel,
                           status__in=LIVE_STATUSES).first()
    if existing is not None:
        return existing, False
    candidate = Conversation(organization=organization, contact_id=contact_id,
                             channel=channel, status=ConversationStatus.OPEN,
                             last_message_at=last_message_at, created_at=timezone.now(),
                             **(defaults or {}))
    rows.bulk_create([candidate], ignore_conflicts=True)
    thread = rows.get(contact_id=contact_id, channel=channel, status__in=LIVE_STATUSES)
    return thread, thread.pk == candidate.pk


@transaction.atomic
def conversation_for_inbound(*, organization, contact_id: str, channel: str,
                             at: datetime | None = None, body: str | None = None
                             ) -> Conversation:
    """The live thread of `contact_id` on `channel`, created when there is none.

    Stamps `last_message_at` (the inbound message's time, `at`, default now), the preview,
    one more unread message and the sentiment of `body` (conversations/ai.py). A snoozed
    thread wakes up. A new thread waits for a human agent in the org-wide queue (the
    router offers it) and emits `conversation.created`.
    """
    at = at or timezone.now()
    text = body or ""
    _score, label = ai.sentiment(text) if text else (None, None)
    inbox = {"last_message_preview": text[:140], "last_message_direction": "inbound",
             "unread_count": 1, "sentiment": label}
    conversation, created = _open_or_continue(
        organization=organization, contact_id=contact_id, channel=channel, last_message_at=at,
        defaults={**inbox, "waiting_since": at})
    if not created:
        changes: dict[str, Any] = {"last_message_preview": text[:140],
                                   "last_message_direction": "inbound",
                                   "unread_count": conversation.unread_count + 1,
                                   "updated_at": timezone.now()}
        if label:
            changes["sentiment"] = label
        if conversation.last_message_at is None or conversation.last_message_at < at:
            changes["last_message_at"] = at
        woke = conversation.status == ConversationStatus.SNOOZED
        if woke:
            changes.update(status=ConversationStatus.OPEN, snoozed_until=None)
        Conversation.objects.for_organization(organization).filter(pk=conversation.pk).update(
            **changes)
        for name, value in changes.items():
            setattr(conversation, name, value)
        if woke:
            record(conversation, "woken", data={"by": "inbound"}, event="conversation.reopened")
    if created:
        audit_record(action="conversation.created", organization=organization,
                     actor_type="system", actor_id="inbound", target=conversation,
                     metadata={"channel": channel, "contact_id": contact_id,
                               "source": "inbound"})
        record(conversation, "created", data={"source": "inbound"}, actor=("system", "inbound"))
        routing.schedule_route(organization)
    return conversation


@transaction.atomic
def conversation_open(*, principal: Principal, contact_id: str, channel: str,
                      request=None) -> tuple[Conversation, bool]:
    """The thread of the pair for `POST /api/v1/conversations`: (conversation, created)."""
    organization = principal.organization
    conversation, created = _open_or_continue(organization=organization,
                                              contact_id=contact_id, channel=channel)
    if created:
        audit_record(action="conversation.created", principal=principal, target=conversation,
                     request=request, metadata={"channel": channel, "contact_id": contact_id})
        record(conversation, "created", principal=principal, data={"source": "api"})
    return conversation, created


# --- Shared ------------------------------------------------------------------------------


def locked(principal_or_org, conversation_id: str) -> Conversation:
    """The conversation row, locked for this transaction; 404 outside the tenant."""
    organization = getattr(principal_or_org, "organization", principal_or_org)
    row = (Conversation.objects.for_organization(organization)
           .select_for_update(of=("self",)).select_related("organization")
           .filter(pk=conversation_id).first())
    if row is None:
        raise APIError("NOT_FOUND")
    return row


def _save(conversation: Conversation, *fields: str) -> None:
    conversation.updated_at = timezone.now()
    conversation.save(update_fields=[*fields, "updated_at"])


def _conflict(conversation: Conversation, message: str) -> APIError:
    return APIError("CONFLICT", message, details={"status": conversation.status})


def unassign_fields(conversation: Conversation) -> list[str]:
    """Drop the assignment and the offer (the caller releases the counter)."""
    conversation.assignee_id = None
    conversation.assignment_status = AssignmentStatus.NONE
    conversation.offered_at = conversation.offer_expires_at = conversation.accepted_at = None
    return ["assignee_id", "assignment_status", "offered_at", "offer_expires_at",
            "accepted_at"]


def conversation_agent_claim(conversation: Conversation, *, agent_id: str) -> None:
    """An AI agent takes the (locked) thread: out of the human queue (an offer the router
    made in the meantime is withdrawn), `ai_led`, `ai_agent_id`; recorded and emitted as
    `conversation.updated`. The agents runtime calls it inside its transaction."""
    fields = ["ai_led", "ai_agent_id", "waiting_since"]
    if conversation.assignment_status == AssignmentStatus.OFFERED:
        routing.release(conversation.organization, conversation.assignee_id)
        fields += unassign_fields(conversation)
    conversation.ai_led, conversation.ai_agent_id = True, agent_id
    conversation.waiting_since = None
    _save(conversation, *fields)
    record(conversation, "agent_started", event="conversation.updated",
           actor=("agent", agent_id), data={"agent_id": agent_id})


# --- Lifecycle verbs -------------------------------------------------------------------


@transaction.atomic
def conversation_close(*, principal: Principal | None, conversation_id: str,
                       organization=None) -> Conversation:
    conversation = locked(principal or organization, conversation_id)
    if conversation.status not in LIVE_STATUSES:
        raise _conflict(conversation, f"The conversation is already {conversation.status}.")
    fields = ["status", "closed_at", "snoozed_until", "waiting_since", "unread_count"]
    if routing.holds_capacity(conversation):
        routing.release(conversation.organization, conversation.assignee_id)
        routing.schedule_route(conversation.organization)
    if conversation.assignment_status == AssignmentStatus.OFFERED:
        fields += unassign_fields(conversation)  # an unanswered offer dies with the thread
    conversation.status = ConversationStatus.CLOSED
    conversation.closed_at = timezone.now()
    conversation.snoozed_until = conversation.waiting_since = None
    conversation.unread_count = 0
    _save(conversation, *fields)
    record(conversation, "closed", principal=principal)
    return conversation


@transaction.atomic
def conversation_reopen(*, principal: Principal, conversation_id: str) -> Conversation:
    conversation = locked(principal, conversation_id)
    if conversation.status == ConversationStatus.OPEN:
        raise _conflict(conversation, "The conversation is already open.")
    if conversation.status != ConversationStatus.SNOOZED:
        live = (Conversation.objects.for_organization(conversation.organization)
                .filter(contact_id=conversation.contact_id, channel=conversation.channel,
                        status__in=LIVE_STATUSES).exclude(pk=conversation.pk).first())
        if live is not None:
            raise APIError("CONFLICT", "The contact has another open thread on this channel.",
                           details={"conversation_id": live.pk})
    previous = conversation.status
    conversation.status = ConversationStatus.OPEN
    conversation.closed_at = conversation.snoozed_until = None
    fields = ["status", "closed_at", "snoozed_until"]
    if previous == ConversationStatus.ARCHIVED:
        conversation.merged_into_id = None
        fields.append("merged_into_id")
    if conversation.assignee_id and previous != ConversationStatus.SNOOZED:
        if conversation.assignment_status == AssignmentStatus.NONE:
            fields += unassign_fields(conversation)
        else:
            routing.hold(conversation.organization, conversation.assignee_id)
    _save(conversation, *fields)
    record(conversation, "reopened", principal=principal, data={"from": previous})
    return conversation


@transaction.atomic
def conversation_snooze(*, principal: Principal, conversation_id: str,
                        until: datetime) -> Conversation:
    if until <= timezone.now():
        raise validation_error("until", "until must be in the future.")
    conversation = locked(principal, conversation_id)
    if conversation.status not in LIVE_STATUSES:
        raise _conflict(conversation, "Only an open conversation can be snoozed.")
    conversation.status = ConversationStatus.SNOOZED
    conversation.snoozed_until = until
    _save(conversation, "status", "snoozed_until")
    record(conversation, "snoozed", principal=principal, data={"until": until.isoformat()})
    return conversation


def conversations_wake_due(limit: int = 500) -> int:
    """Snoozed threads whose `until` has passed become open again (beat job)."""
    woken = 0
    with transaction.atomic():
        rows = list(Conversation.objects.dangerously_unscoped()
                    .select_for_update(skip_locked=True, of=("self",))
                    .select_related("organization")
                    .filter(status=ConversationStatus.SNOOZED,
                            snoozed_until__lte=timezone.now())
                    .order_by("snoozed_until")[:limit])
        for conversation in rows:
            conversation.status = ConversationStatus.OPEN
            conversation.snoozed_until = None
            _save(conversation, "status", "snoozed_until")
            record(conversation, "woken", data={"by": "snooze_elapsed"},
                   event="conversation.reopened", actor=("system", "snooze"))
            woken += 1
    return woken


@transaction.atomic
def conversation_escalate(*, principal: Principal, conversation_id: str,
                          reason: str = "", priority: str | None = None) -> Conversation:
    """Escalated: stamped, priority raised to at least `high` (or the given one, never
    lowered), back in line for a human when no one holds it."""
    conversation = locked(principal, conversation_id)
    if conversation.status not in LIVE_STATUSES:
        raise _conflict(conversation, "A closed conversation cannot be escalated.")
    target = priority or Priority.HIGH
    if PRIORITY_RANK[target] > PRIORITY_RANK[conversation.priority]:
        conversation.priority = target
    conversation.escalated_at = timezone.now()
    fields = ["priority", "escalated_at"]
    if not conversation.assignee_id and conversation.waiting_since is None:
        conversation.waiting_since = timezone.now()
        fields.append("waiting_since")
        routing.schedule_route(conversation.organization)
    _save(conversation, *fields)
    record(conversation, "escalated", principal=principal,
           data={"reason": reason, "priority": conversation.priority})
    return conversation


def normalize_tags(tags: list[str]) -> list[str]:
    seen: list[str] = []
    for tag in tags:
        tag = tag.strip()
        if tag and tag not in seen:
            seen.append(tag)
    if len(seen) > MAX_TAGS:
        raise validation_error("tags", f"At most {MAX_TAGS} tags.")
    return seen


@transaction.atomic
def conversation_set_tags(*, principal: Principal, conversation_id: str,
                          tags: list[str]) -> Conversation:
    conversation = locked(principal, conversation_id)
    before = list(conversation.tags or [])
    conversation.tags = normalize_tags(tags)
    _save(conversation, "tags")
    record(conversation, "tags_changed", principal=principal, event="conversation.updated",
           data={"before": before, "after": conversation.tags})
    return conversation


@transaction.atomic
def conversation_change_tags(*, principal: Principal, conversation_id: str,
                             add: list[str] = (), remove: list[str] = ()) -> Conversation:
    conversation = locked(principal, conversation_id)
    before = list(conversation.tags or [])
    after = [t for t in before if t not in set(remove)]
    after = normalize_tags(after + list(add))
    conversation.tags = after
    _save(conversation, "tags")
    record(conversation, "tags_changed", principal=principal, event="conversation.updated",
           data={"before": before, "after": after})
    return conversation


@transaction.atomic
def conversation_set_priority(*, principal: Principal, conversation_id: str,
                              priority: str) -> Conversation:
    conversation = locked(principal, conversation_id)
    before = conversation.priority
    conversation.priority = priority
    _save(conversation, "priority")
    record(conversation, "priority_changed", principal=principal,
           event="conversation.updated", data={"before": before, "after": priority})
    return conversation


@transaction.atomic
def conversation_mark_read(*, principal: Principal, conversation_id: str) -> Conversation:
    conversation = locked(principal, conversation_id)
    if conversation.unread_count:
        conversation.unread_count = 0
        _save(conversation, "unread_count")
        record(conversation, "read", principal=principal, event="conversation.updated")
    return conversation


@transaction.atomic
def conversation_resume_channel(*, principal: Principal, conversation_id: str,
                                channel: str) -> Conversation:
    """Replies go out on `channel` from now on (the contact must be reachable there)."""
    from .replies import contact_address

    conversation = locked(principal, conversation_id)
    if conversation.status not in LIVE_STATUSES:
        raise _conflict(conversation, "Reopen the conversation first.")
    if not contact_address(conversation, channel):
        raise validation_error("channel", f"The contact has no address for {channel}.")
    before = conversation.reply_channel or conversation.channel
    conversation.reply_channel = None if channel == conversation.channel else channel
    _save(conversation, "reply_channel")
    record(conversation, "channel_resumed", principal=principal,
           event="conversation.updated", data={"before": before, "after": channel})
    return conversation


def conversation_emit_updated(conversation: Conversation) -> None:
    emit(organization=conversation.organization, type="conversation.updated",
         data=conversation_data(conversation))
