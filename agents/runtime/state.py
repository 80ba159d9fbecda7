"""Per-conversation runtime state and the agents' maintained counters.

`Agent.active_conversations` is the number of live threads an agent leads. It moves by one
exactly when `AgentConversation.active` flips, and `sync` flips it from the conversation's
own state (`ai_led`, `status`) after every recorded conversation change (handoff, resume,
close, merge...), so it follows the thread whoever changed it.
"""

from __future__ import annotations

from django.db.models import F

from ..agent_models import Agent, AgentConversation

_LIVE = ("open", "snoozed")


def _move_active(organization, agent_id: str, delta: int) -> None:
    rows = Agent.objects.for_organization(organization).filter(pk=agent_id)
    if delta < 0:
        rows = rows.filter(active_conversations__gt=0)
    rows.update(active_conversations=F("active_conversations") + delta)


def sync(conversation, kind: str = "") -> None:
    """Listener of conversations.activity.record: the agent's `active` flag and counter
    follow the thread; a resumed thread starts a fresh unresolved-turn count."""
    agent_id = conversation.ai_agent_id
    if not agent_id:
        return
    organization = conversation.organization
    desired = bool(conversation.ai_led) and conversation.status in _LIVE
    rows = AgentConversation.objects.for_organization(organization).filter(
        conversation_id=conversation.pk, agent_id=agent_id)
    changes = {"active": desired}
    if kind == "agent_resumed":
        changes["unresolved_turns"] = 0
    if rows.filter(active=not desired).update(**changes):
        _move_active(organization, agent_id, 1 if desired else -1)
    elif kind == "agent_resumed":
        rows.update(unresolved_turns=0)


def started(organization, conversation_id: str, agent_id: str) -> bool:
    """The state row of a thread the agent takes; True when it is the agent's first time
    on this conversation (the `conversation_count` counter rises then)."""
    _row, created = AgentConversation.objects.for_organization(organization).get_or_create(
        organization=organization, conversation_id=conversation_id,
        defaults={"agent_id": agent_id})
    if created:
        Agent.objects.for_organization(organization).filter(pk=agent_id).update(
            conversation_count=F("conversation_count") + 1)
    return created


def add_turn(organization, conversation_id: str, *, tokens: int,
             unresolved: bool = True) -> None:
    """One answer more on the thread (the agent's own `total_tokens` moves in
    `add_tokens`, once per turn, also for turns that end in a handoff)."""
    AgentConversation.objects.for_organization(organization).filter(
        conversation_id=conversation_id).update(
        turns=F("turns") + 1, total_tokens=F("total_tokens") + tokens,
        unresolved_turns=F("unresolved_turns") + 1 if unresolved else 0)


def add_tokens(organization, agent_id: str, tokens: int) -> None:
    if tokens:
        Agent.objects.for_organization(organization).filter(pk=agent_id).update(
            total_tokens=F("total_tokens") + tokens)


def reset_unresolved(organization, conversation_id: str) -> None:
    AgentConversation.objects.for_organization(organization).filter(
        conversation_id=conversation_id).update(unresolved_turns=0)


def unresolved_turns(organization, conversation_id: str) -> int:
    return (AgentConversation.objects.for_organization(organization)
            .filter(conversation_id=conversation_id)
            .values_list("unresolved_turns", flat=True).first()) or 0
