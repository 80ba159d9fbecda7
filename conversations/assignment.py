"""Assignment: direct assign, and the answers to the router's offers.

`accept` and `decline` lock the conversation row, so of two concurrent accepts of one offer
exactly one finds it still `offered` and wins; the other answers 422
`ASSIGNMENT_OFFER_STALE` (as does any answer to an offer that expired, was replaced or
accepted already).
"""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.utils import timezone

from platform_core.errors import APIError, validation_error
from platform_core.identity.principal import Principal
from platform_core.tenancy.models import Membership

from . import routing
from .activity import record
from .models import LIVE_STATUSES, AssignmentStatus, Conversation
from .services import _save, locked, unassign_fields


def _stale(message: str = "This offer is no longer open.") -> APIError:
    return APIError("ASSIGNMENT_OFFER_STALE", message)


def _offered_to_caller(principal: Principal, conversation: Conversation) -> None:
    if not principal.user_id:
        raise APIError("INSUFFICIENT_PERMISSIONS",
                       "Only the offered agent (a signed-in member) can answer an offer.")
    if (conversation.assignment_status != AssignmentStatus.OFFERED
            or conversation.assignee_id != principal.user_id
            or (conversation.offer_expires_at and conversation.offer_expires_at <= timezone.now())):
        raise _stale()


@transaction.atomic
def assignment_accept(*, principal: Principal, conversation_id: str) -> Conversation:
    conversation = locked(principal, conversation_id)
    _offered_to_caller(principal, conversation)
    conversation.assignment_status = AssignmentStatus.ACCEPTED
    conversation.accepted_at = timezone.now()
    conversation.offer_expires_at = None
    conversation.waiting_since = None
    _save(conversation, "assignment_status", "accepted_at", "offer_expires_at", "waiting_since")
    record(conversation, "assignment_accepted", principal=principal,
           event="conversation.assigned", data={"agent_id": principal.user_id})
    return conversation


@transaction.atomic
def assignment_decline(*, principal: Principal, conversation_id: str
                       ) -> tuple[Conversation, dict[str, Any] | None]:
    """Declined: released, the caller excluded, offered at once to the next best fit
    (excluding everyone who declined). Returns the `next_offer` summary or None."""
    conversation = locked(principal, conversation_id)
    _offered_to_caller(principal, conversation)
    routing.release(conversation.organization, principal.user_id)
    declined = list(conversation.declined_by or [])
    if principal.user_id not in declined:
        declined.append(principal.user_id)
    conversation.declined_by = declined
    fields = ["declined_by", *unassign_fields(conversation)]
    _save(conversation, *fields)
    record(conversation, "assignment_declined", principal=principal,
           event="conversation.updated", data={"agent_id": principal.user_id})
    agent = routing.offer_next(conversation)
    if agent is None:
        return conversation, None
    return conversation, {"agent_id": agent.user_id,
                          "offered_at": conversation.offered_at,
                          "expires_at": conversation.offer_expires_at}


@transaction.atomic
def conversation_assign(*, principal: Principal, conversation_id: str,
                        agent_id: str | None) -> Conversation:
    """Assign to one member (an individual agent, never a team or queue); None unassigns."""
    if agent_id is not None and not Membership.objects.for_organization(
            principal.organization).filter(user_id=agent_id).exists():
        raise validation_error("agent_id", "agent_id must be a member (usr_) of this "
                                           "organization; teams and queues are not agents.")
    conversation = locked(principal, conversation_id)
    if conversation.status not in LIVE_STATUSES:
        raise APIError("CONFLICT", "Reopen the conversation first.",
                       details={"status": conversation.status})
    previous = conversation.assignee_id
    if routing.holds_capacity(conversation):
        routing.release(conversation.organization, previous)
    fields = unassign_fields(conversation)
    if agent_id is None:
        routing.schedule_route(conversation.organization)
        if conversation.waiting_since is None:
            conversation.waiting_since = timezone.now()  # back in line for a human
            fields.append("waiting_since")
    else:
        conversation.assignee_id = agent_id
        conversation.assignment_status = AssignmentStatus.ASSIGNED
        conversation.accepted_at = timezone.now()
        conversation.waiting_since = None
        fields.append("waiting_since")
        routing.hold(conversation.organization, agent_id)
    _save(conversation, *fields)
    record(conversation, "assigned" if agent_id else "unassigned", principal=principal,
           event="conversation.assigned" if agent_id else "conversation.unassigned",
           data={"agent_id": agent_id, "previous_agent_id": previous})
    return conversation
