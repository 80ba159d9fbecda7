"""Handoff from an AI-led thread to a human, and the AI taking it back.

`handoff` parks the thread for a human: the AI pauses (`ai_led` false), the thread waits in
`target_queue` (or the org-wide queue, `queue` empty) and the router offers it. The packet
(`needs_human`, `handoff_brief`, `matched_operators`, `queue_position`, clearance status)
is answered inline and readable later. `handoff/resolve` closes the AI pause;
`agent/resume` lets the AI lead the thread again.
"""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.utils import timezone

from platform_core.errors import APIError
from platform_core.identity.principal import Principal

from . import ai, routing
from .activity import record
from .models import (
    LIVE_STATUSES,
    AssignmentStatus,
    Conversation,
    ConversationStatus,
    HandoffStatus,
)
from .services import _save, locked


def queue_position(conversation: Conversation) -> int | None:
    """1-based place in its queue among threads waiting unoffered; None when not waiting."""
    if conversation.waiting_since is None or conversation.assignee_id:
        return None
    ahead = (Conversation.objects.for_organization(conversation.organization)
             .filter(queue=conversation.queue, waiting_since__isnull=False,
                     assignee_id__isnull=True, status=ConversationStatus.OPEN,
                     waiting_since__lt=conversation.waiting_since).count())
    return ahead + 1


def clearance_status(conversation: Conversation) -> str:
    if conversation.handoff_status == HandoffStatus.RESOLVED:
        return "resolved"
    if conversation.handoff_status == HandoffStatus.NONE:
        return "not_requested"
    if conversation.assignment_status in (AssignmentStatus.ACCEPTED, AssignmentStatus.ASSIGNED):
        return "cleared"  # a human holds the thread
    if conversation.assignment_status == AssignmentStatus.OFFERED:
        return "offered"
    return "queued"


def packet(conversation: Conversation) -> dict[str, Any]:
    return {
        "conversation_id": conversation.pk,
        "needs_human": conversation.handoff_status == HandoffStatus.PENDING,
        "clearance_status": clearance_status(conversation),
        "handoff_status": conversation.handoff_status,
        "reason_category": conversation.handoff_reason or None,
        "target_queue": conversation.queue or None,
        "handoff_brief": conversation.handoff_brief,
        "requested_at": conversation.handoff_requested_at,
        "assignee_id": conversation.assignee_id,
        "matched_operators": routing.ranked_operators(conversation.organization, conversation),
        "queue_position": queue_position(conversation),
    }


def _inbound_texts(conversation: Conversation) -> list[str]:
    from messaging.models import Message

    rows = (Message.objects.for_organization(conversation.organization)
            .filter(conversation_id=conversation.pk, direction="inbound")
            .order_by("-id").values_list("body", flat=True)[:3])
    return list(reversed(rows))


@transaction.atomic
def handoff_request(*, principal: Principal, conversation_id: str, target_queue: str | None,
                    reason_category: str) -> Conversation:
    conversation = locked(principal, conversation_id)
    if conversation.status not in LIVE_STATUSES:
        raise APIError("CONFLICT", "Reopen the conversation first.",
                       details={"status": conversation.status})
    if not conversation.ai_led:
        raise APIError("CONFLICT", "Only an AI-led thread is handed off; this one is "
                                   "already worked by humans.",
                       details={"ai_led": False, "handoff_status": conversation.handoff_status})
    now = timezone.now()
    conversation.ai_led = False
    conversation.handoff_status = HandoffStatus.PENDING
    conversation.handoff_reason = reason_category
    conversation.handoff_requested_at = now
    conversation.handoff_brief = ai.handoff_brief(reason_category=reason_category,
                                                  inbound_texts=_inbound_texts(conversation))
    conversation.queue = target_queue or ""
    fields = ["ai_led", "handoff_status", "handoff_reason", "handoff_requested_at",
              "handoff_brief", "queue"]
    if conversation.status == ConversationStatus.SNOOZED:
        conversation.status, conversation.snoozed_until = ConversationStatus.OPEN, None
        fields += ["status", "snoozed_until"]
    if not conversation.assignee_id:
        conversation.waiting_since = now
        fields.append("waiting_since")
    _save(conversation, *fields)
    record(conversation, "handoff_requested", principal=principal,
           data={"reason_category": reason_category, "target_queue": target_queue})
    # Offer it now when someone is free, so the packet answered inline is current.
    if not conversation.assignee_id:
        routing.offer_next(conversation)
    return conversation


@transaction.atomic
def handoff_resolve(*, principal: Principal, conversation_id: str) -> Conversation:
    conversation = locked(principal, conversation_id)
    if conversation.handoff_status != HandoffStatus.PENDING:
        raise APIError("CONFLICT", "No handoff is pending on this conversation.",
                       details={"handoff_status": conversation.handoff_status})
    conversation.handoff_status = HandoffStatus.RESOLVED
    fields = ["handoff_status"]
    if conversation.waiting_since is not None and not conversation.assignee_id:
        conversation.waiting_since = None  # out of the queue: nobody needs to take it
        fields.append("waiting_since")
    _save(conversation, *fields)
    record(conversation, "handoff_resolved", principal=principal)
    return conversation


@transaction.atomic
def agent_resume(*, principal: Principal, conversation_id: str) -> Conversation:
    """The AI leads the thread again (after a resolved handoff, or to take it over)."""
    conversation = locked(principal, conversation_id)
    if conversation.status not in LIVE_STATUSES:
        raise APIError("CONFLICT", "Reopen the conversation first.",
                       details={"status": conversation.status})
    if conversation.ai_led:
        raise APIError("CONFLICT", "The AI already leads this conversation.",
                       details={"ai_led": True})
    if conversation.handoff_status == HandoffStatus.PENDING:
        conversation.handoff_status = HandoffStatus.RESOLVED
    conversation.ai_led = True
    fields = ["ai_led", "handoff_status"]
    if conversation.waiting_since is not None and not conversation.assignee_id:
        conversation.waiting_since = None
        fields.append("waiting_since")
    _save(conversation, *fields)
    record(conversation, "agent_resumed", principal=principal)
    return conversation
