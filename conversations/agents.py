"""Routing agents: which members take conversations, with what skills and capacity."""

from __future__ import annotations

from django.db import transaction

from platform_core.audit.services import audit_record
from platform_core.errors import APIError, validation_error
from platform_core.identity.principal import Principal
from platform_core.tenancy.models import Membership, Role

from . import routing
from .routing_models import RoutingAgent

MANAGERS = (Role.OWNER, Role.ADMIN)


@transaction.atomic
def routing_agent_put(*, principal: Principal, user_id: str, skills: list[str] | None,
                      capacity: int | None, availability: str | None
                      ) -> tuple[RoutingAgent, bool]:
    """Create or update a member's routing profile. Owners and admins set anyone's; a
    member may set their own. Becoming available or gaining capacity runs the router."""
    if principal.role not in MANAGERS and principal.user_id != user_id:
        raise APIError("INSUFFICIENT_PERMISSIONS",
                       "Only owners and admins change another member's routing profile.")
    organization = principal.organization
    if not Membership.objects.for_organization(organization).filter(user_id=user_id).exists():
        raise APIError("NOT_FOUND", "No member with this id.")
    rows = RoutingAgent.objects.for_organization(organization)
    agent = rows.select_for_update().filter(user_id=user_id).first()
    created = agent is None
    if created:
        if skills is None and capacity is None and availability is None:
            raise validation_error("capacity", "Give skills, capacity or availability.")
        agent = RoutingAgent(organization=organization, user_id=user_id,
                             active_count=routing.recount(organization, user_id))
    if skills is not None:
        agent.skills = list(dict.fromkeys(s.strip() for s in skills if s.strip()))
    if capacity is not None:
        agent.capacity = capacity
    if availability is not None:
        agent.availability = availability
    agent.save()
    audit_record(action="routing_agent.updated", principal=principal, target=agent,
                 metadata={"user_id": user_id, "skills": agent.skills,
                           "capacity": agent.capacity, "availability": agent.availability})
    routing.schedule_route(organization)
    return agent, created
