"""Background tasks of the agents app: one agent turn per inbound message."""

from __future__ import annotations

from celery import shared_task

from platform_core.tenancy.context import tenant_context
from platform_core.tenancy.models import Organization


@shared_task(name="agents.reply", ignore_result=True)
def reply(organization_id, conversation_id: str, message_id: str) -> str:
    """Answer one inbound message of an AI-led conversation (agents.runtime.turn)."""
    from .runtime import turn

    organization = Organization.objects.filter(pk=organization_id).first()
    if organization is None:
        return "no_organization"
    with tenant_context(organization):
        return turn.run_turn(organization, conversation_id, message_id).outcome
