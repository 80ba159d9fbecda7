"""Celery tasks of the RCS family. `rcs.refresh_agents` (beat, config/beat.py): Google
decides agent verification and carrier launches on its own time; live agents awaiting a
verdict (or launched on some carriers only) are read back in batches."""

from __future__ import annotations

import logging

from celery import shared_task
from django.db.models import Q

from platform_core.errors import APIError
from platform_core.tenancy.context import tenant_context

from . import services
from .models import AgentStatus, RcsAgent, VerificationStatus

logger = logging.getLogger("messaging.rcs")
BATCH = 200


def refresh_agents(limit: int = BATCH) -> int:
    """Refresh up to `limit` live agents, least recently updated first; how many."""
    rows = (RcsAgent.objects.dangerously_unscoped()
            .filter(organization__sandbox=False)
            .filter(Q(verification_status=VerificationStatus.PENDING)
                    | Q(verification_status=VerificationStatus.VERIFIED,
                        status=AgentStatus.VERIFIED))
            .select_related("organization").order_by("updated_at")[:limit])
    done = 0
    for agent in rows:
        try:
            with tenant_context(agent.organization):
                services.agent_refresh(organization=agent.organization, agent_id=agent.pk)
            done += 1
        except APIError as exc:  # one agent's failure never stops the batch
            logger.warning("rcs agent %s refresh failed: %s", agent.pk, exc.code)
    return done


@shared_task(name="rcs.refresh_agents", ignore_result=True)
def refresh_agents_task() -> int:
    return refresh_agents()
