"""The router: offers waiting conversations to the best-fit available agent.

Waiting conversations (`waiting_since` set, no assignee, open) are taken strictly in
order of waiting time. For each, the best fit among available agents with free capacity
and who have not declined it: agents holding the conversation's queue as a skill first,
then the lowest load (`active_count / capacity`), then the longest idle
(`last_assigned_at`, never first), then the agent id. Load comes from the maintained
counter `RoutingAgent.active_count` (routing_models.py), read once per routing pass and
kept in memory while the pass decides, so no decision recounts conversations.

An offer reserves one unit of the agent's capacity until it is accepted (kept), declined
or expires (released, and the conversation is offered to the next best fit). One routing
pass per organization runs at a time (a transaction-scoped advisory lock), so two passes
never offer past an agent's capacity.
"""

from __future__ import annotations

import logging
import zlib
from datetime import datetime, timedelta

from django.conf import settings
from django.db import connection, transaction
from django.db.models import F
from django.utils import timezone

from .models import AssignmentStatus, Conversation, ConversationActivity, ConversationStatus
from .payloads import conversation_data
from .routing_models import Availability, RoutingAgent

logger = logging.getLogger("conversations.routing")

ROUTING_BATCH = 500


def offer_ttl() -> timedelta:
    return timedelta(seconds=getattr(settings, "CONVERSATIONS_OFFER_TTL_SECONDS", 60))


def _lock_organization(organization_id) -> None:
    if connection.vendor != "postgresql":
        return  # SQLite (the embedded default) lets one writing transaction in at a time
    key = zlib.crc32(f"conversations.route:{organization_id}".encode())
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(%s, %s)", [4217, key - 2**31])


# --- Maintained load counters ----------------------------------------------------------


def hold(organization, user_id: str | None, *, at: datetime | None = None) -> None:
    """One more conversation on `user_id` (offered or held)."""
    if user_id:
        RoutingAgent.objects.for_organization(organization).filter(user_id=user_id).update(
            active_count=F("active_count") + 1, last_assigned_at=at or timezone.now())


def release(organization, user_id: str | None) -> None:
    """One conversation fewer on `user_id` (declined, expired, closed, reassigned)."""
    if user_id:
        RoutingAgent.objects.for_organization(organization).filter(
            user_id=user_id, active_count__gt=0).update(active_count=F("active_count") - 1)


def holds_capacity(conversation: Conversation) -> bool:
    return bool(conversation.assignee_id
                and conversation.assignment_status != AssignmentStatus.NONE
                and conversation.status in (ConversationStatus.OPEN, ConversationStatus.SNOOZED))


def recount(organization, user_id: str) -> int:
    """The real load of one agent: used once, when a member becomes a routing agent."""
    return Conversation.objects.for_organization(organization).filter(
        assignee_id=user_id, status__in=(ConversationStatus.OPEN, ConversationStatus.SNOOZED)
    ).exclude(assignment_status=AssignmentStatus.NONE).count()


# --- Choosing ------------------------------------------------------------------------------


def _rank(agent: RoutingAgent, queue: str):
    skilled = 0 if (queue and queue in (agent.skills or [])) else 1
    load = agent.active_count / agent.capacity if agent.capacity else 1.0
    idle = agent.last_assigned_at.timestamp() if agent.last_assigned_at else float("-inf")
    return (skilled, load, idle, agent.pk)


def best_fit(agents: list[RoutingAgent], conversation: Conversation) -> RoutingAgent | None:
    excluded = set(conversation.declined_by or [])
    candidates = [a for a in agents if a.active_count < a.capacity and a.user_id not in excluded]
    if not candidates:
        return None
    return min(candidates, key=lambda a: _rank(a, conversation.queue))


def ranked_operators(organization, conversation: Conversation, limit: int = 3) -> list[dict]:
    """The matched operators of a handoff packet: available agents in best-fit order."""
    agents = list(RoutingAgent.objects.for_organization(organization)
                  .filter(availability=Availability.AVAILABLE))
    excluded = set(conversation.declined_by or [])
    agents = sorted((a for a in agents if a.user_id not in excluded),
                    key=lambda a: (a.active_count >= a.capacity, *_rank(a, conversation.queue)))
    return [{"agent_id": a.user_id, "skills": a.skills, "load": a.active_count,
             "capacity": a.capacity,
             "skill_match": bool(conversation.queue and conversation.queue in a.skills)}
            for a in agents[:limit]]


def _available_agents(organization) -> list[RoutingAgent]:
    return list(RoutingAgent.objects.for_organization(organization)
                .select_for_update()
                .filter(availability=Availability.AVAILABLE, active_count__lt=F("capacity"))
                .order_by("pk"))


def _offer(conversation: Conversation, agent: RoutingAgent, now: datetime) -> None:
    conversation.assignee_id = agent.user_id
    conversation.assignment_status = AssignmentStatus.OFFERED
    conversation.offered_at = now
    conversation.offer_expires_at = now + offer_ttl()
    conversation.accepted_at = None
    agent.active_count += 1
    agent.last_assigned_at = now


def _write(organization, offered: list[Conversation], agents: list[RoutingAgent],
           now: datetime) -> None:
    from platform_core.events.bus import emit_batch

    if connection.vendor != "postgresql":  # the embedded SQLite default: small, so the ORM
        for c in offered:
            c.updated_at = now
        Conversation.objects.for_organization(organization).bulk_update(
            offered, ["assignee_id", "assignment_status", "offered_at", "offer_expires_at",
                      "accepted_at", "updated_at"])
        RoutingAgent.objects.for_organization(organization).bulk_update(
            agents, ["active_count", "last_assigned_at"])
    else:
        _write_postgresql(organization, offered, agents)
    ConversationActivity.objects.for_organization(organization).bulk_create([
        ConversationActivity(organization=organization, conversation=c, kind="offered",
                             actor_type="system", actor_id="router", created_at=now,
                             data={"agent_id": c.assignee_id,
                                   "expires_at": c.offer_expires_at.isoformat()})
        for c in offered])
    emit_batch([(organization, "conversation.offered", conversation_data(c)) for c in offered])


def _write_postgresql(organization, offered: list[Conversation],
                      agents: list[RoutingAgent]) -> None:
    # One UPDATE ... FROM unnest(...) per table: Django's bulk_update builds a CASE per
    # field and row, which costs seconds per pass of a few hundred offers.
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {Conversation._meta.db_table} AS c SET assignee_id = v.agent,"  # noqa: S608 - table name from the model
            " assignment_status = %s, offered_at = v.at, offer_expires_at = v.expires,"
            " accepted_at = NULL, updated_at = v.at"
            " FROM (SELECT unnest(%s::text[]) AS id, unnest(%s::text[]) AS agent,"
            " unnest(%s::timestamptz[]) AS at, unnest(%s::timestamptz[]) AS expires) AS v"
            " WHERE c.id = v.id AND c.organization_id = %s",
            [AssignmentStatus.OFFERED, [c.pk for c in offered],
             [c.assignee_id for c in offered], [c.offered_at for c in offered],
             [c.offer_expires_at for c in offered], organization.pk])
        cursor.execute(
            f"UPDATE {RoutingAgent._meta.db_table} AS a SET active_count = v.load,"  # noqa: S608 - table name from the model
            " last_assigned_at = v.at"
            " FROM (SELECT unnest(%s::text[]) AS id, unnest(%s::int[]) AS load,"
            " unnest(%s::timestamptz[]) AS at) AS v"
            " WHERE a.id = v.id AND a.organization_id = %s",
            [[a.pk for a in agents], [a.active_count for a in agents],
             [a.last_assigned_at for a in agents], organization.pk])


def offer_next(conversation: Conversation) -> RoutingAgent | None:
    """Offer one (locked, waiting) conversation to its best fit now; None when nobody fits.
    The caller holds the conversation's row lock and the transaction."""
    organization = conversation.organization
    _lock_organization(organization.pk)
    agents = _available_agents(organization)
    agent = best_fit(agents, conversation)
    if agent is None:
        return None
    now = timezone.now()
    conversation.updated_at = now
    _offer(conversation, agent, now)
    _write(organization, [conversation], [agent], now)
    return agent


def route(organization) -> int:
    """One routing pass: offer waiting conversations, oldest first, while agents have free
    capacity. Returns the number of offers made."""
    made = 0
    with transaction.atomic():
        _lock_organization(organization.pk)
        agents = _available_agents(organization)
        if not agents:
            return 0
        waiting = list(
            Conversation.objects.for_organization(organization)
            .select_for_update(skip_locked=True)
            .filter(waiting_since__isnull=False, assignee_id__isnull=True,
                    status=ConversationStatus.OPEN)
            .order_by("waiting_since", "id")[:ROUTING_BATCH])
        now = timezone.now()
        offered: list[Conversation] = []
        touched: dict[str, RoutingAgent] = {}
        for conversation in waiting:
            agent = best_fit(agents, conversation)
            if agent is None:
                if not any(a.active_count < a.capacity for a in agents):
                    break  # everyone is full: the rest keep their place in line
                continue  # only agents who declined this one are free: try the next
            conversation.updated_at = now
            _offer(conversation, agent, now)
            offered.append(conversation)
            touched[agent.pk] = agent
        if offered:
            _write(organization, offered, list(touched.values()), now)
        made = len(offered)
    return made


def schedule_route(organization) -> None:
    """Run a routing pass after the current transaction commits (capacity freed, a thread
    entered the queue, an agent became available)."""
    from .tasks import route_organization

    organization_id = organization.pk
    transaction.on_commit(lambda: route_organization.delay(organization_id))


def expire_offers(limit: int = 500) -> int:
    """Offers past their time pass on: released, the agent excluded, re-routed."""
    now = timezone.now()
    expired = 0
    organizations = {}
    with transaction.atomic():
        rows = list(Conversation.objects.dangerously_unscoped()
                    .select_for_update(skip_locked=True, of=("self",))
                    .select_related("organization")
                    .filter(assignment_status=AssignmentStatus.OFFERED,
                            offer_expires_at__lte=now)
                    .order_by("offer_expires_at")[:limit])
        for conversation in rows:
            organization = conversation.organization
            release(organization, conversation.assignee_id)
            declined = list(conversation.declined_by or [])
            if conversation.assignee_id and conversation.assignee_id not in declined:
                declined.append(conversation.assignee_id)
            previous = conversation.assignee_id
            conversation.declined_by = declined
            conversation.assignee_id = None
            conversation.assignment_status = AssignmentStatus.NONE
            conversation.offered_at = conversation.offer_expires_at = None
            conversation.save(update_fields=["declined_by", "assignee_id", "assignment_status",
                                             "offered_at", "offer_expires_at", "updated_at"])
            from .activity import record

            record(conversation, "offer_expired", data={"agent_id": previous},
                   actor=("system", "router"))
            organizations[organization.pk] = organization
            expired += 1
    for organization in organizations.values():
        route(organization)
    return expired
