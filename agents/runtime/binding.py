"""Which agent answers an inbound message, and the agent taking the thread.

Registered as a messaging inbound listener (messaging/hooks.py): it runs after the inbound
message, its contact and its conversation are stored. The reply itself runs later, in the
`agents.reply` task queued after the commit, never in the inbound request.
"""

from __future__ import annotations

import logging

from django.db import transaction
from django.db.models import Q

from ..agent_models import Agent, AgentStatus, DeployChannel
from . import state

logger = logging.getLogger("agents.runtime")

# An mms message reaches the agent bound to the sms number.
_BINDING_CHANNEL = {"mms": "sms"}


def bound_agent(organization, channel: str, to: str) -> Agent | None:
    """The active agent deployed on (`channel`, `to`): bound to that number first, then to
    the whole channel (rcs), then a `webhook` deployment (whose `channels`, when set,
    must name the channel)."""
    channel = _BINDING_CHANNEL.get(channel, channel)
    candidates = list(Agent.objects.for_organization(organization)
                      .filter(status=AgentStatus.ACTIVE)
                      .filter(Q(deploy_channel=channel) | Q(deploy_channel=DeployChannel.WEBHOOK))
                      .order_by("created_at", "id"))
    for wanted in (lambda a: a.deploy_channel == channel and a.deploy_phone_number == to,
                   lambda a: a.deploy_channel == channel and not a.deploy_phone_number,
                   lambda a: a.deploy_channel == DeployChannel.WEBHOOK
                   and (not a.channels or channel in a.channels)):
        agent = next((a for a in candidates if wanted(a)), None)
        if agent is not None:
            return agent
    return None


def _held_by_human(conversation) -> bool:
    return (conversation.assignment_status in ("accepted", "assigned")
            or conversation.handoff_status == "pending")


def _claim(conversation, agent: Agent) -> None:
    """The agent leads the thread (the conversations service), and its run starts."""
    from conversations.services import conversation_agent_claim

    conversation_agent_claim(conversation, agent_id=agent.pk)
    state.started(conversation.organization, conversation.pk, agent.pk)


def on_inbound(organization, message, item) -> None:
    """A messaging inbound listener: queue the reply when an agent leads (or takes) the
    thread. Keyword messages (STOP, HELP...) are answered by messaging, not the agent."""
    if not message.conversation_id or (message.metadata or {}).get("keyword"):
        return
    from conversations.services import locked

    with transaction.atomic():
        conversation = locked(organization, message.conversation_id)
        if conversation.status != "open":
            return
        if conversation.ai_agent_id and not conversation.ai_led:
            return  # handed off: a human holds the thread until agent/resume
        if not conversation.ai_agent_id:
            agent = bound_agent(organization, message.channel, message.to)
            if agent is None:
                return
            if not conversation.ai_led and _held_by_human(conversation):
                return
            _claim(conversation, agent)
        schedule_reply(organization.pk, conversation.pk, message.pk)


def schedule_reply(organization_id, conversation_id: str, message_id: str) -> None:
    from ..tasks import reply

    transaction.on_commit(lambda: reply.delay(organization_id, conversation_id, message_id))
