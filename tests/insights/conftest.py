"""Insights tests: seed usage, agents, conversations, tracked events, messages and
recordings directly (the figures expected are computed by the tests from what they seed)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from agents.agent_models import Agent
from agents.usage.models import AIUsage
from conversations.models import Conversation
from messaging.models import Message
from platform_core.events.models import TrackedEvent
from platform_core.tenancy.context import tenant_context
from recordings.models import Recording

NOW = datetime(2026, 3, 20, 15, 7, tzinfo=UTC)


def at(text: str) -> datetime:
    return datetime.fromisoformat(text)


def make_agent(org, name: str = "Helper", model: str = "gpt-4o-mini") -> Agent:
    with tenant_context(org):
        return Agent.objects.create(organization=org, name=name, model=model)


def usage(org, when: datetime, *, cost: int, tokens: int = 100, agent_id: str = "",
          conversation_id: str = "", channel: str = "", model: str = "gpt-4o-mini",
          feature: str = "chat.completions") -> AIUsage:
    with tenant_context(org):
        return AIUsage.objects.create(
            organization=org, created_at=when, cost_cents=cost, total_tokens=tokens,
            prompt_tokens=tokens, agent_id=agent_id, conversation_id=conversation_id,
            channel=channel, model=model, feature=feature, engine="local")


_phone = iter(range(10**6))


def conversation(org, when: datetime, *, agent_id: str = "", status: str = "open",
                 handoff: str = "none", escalated: bool = False,
                 channel: str = "sms") -> Conversation:
    with tenant_context(org):
        return Conversation.objects.create(
            organization=org, contact_id=f"cnt_{next(_phone)}", channel=channel,
            status=status, ai_agent_id=agent_id, ai_led=bool(agent_id), handoff_status=handoff,
            escalated_at=when if escalated else None, created_at=when,
            closed_at=when if status == "closed" else None)


def track(org, when: datetime, name: str = "conversion", **properties) -> TrackedEvent:
    with tenant_context(org):
        return TrackedEvent.objects.create(organization=org, name=name, properties=properties,
                                           occurred_at=when)


def message(org, when: datetime, *, channel: str = "sms", status: str = "delivered",
            direction: str = "outbound") -> Message:
    with tenant_context(org):
        return Message.objects.create(organization=org, channel=channel, direction=direction,
                                      to="+14155550100", body="hi", status=status,
                                      created_at=when)


def recording(org, when: datetime, *, kind: str = "call", seconds: int | None = 61
              ) -> Recording:
    with tenant_context(org):
        return Recording.objects.create(organization=org, kind=kind, duration_seconds=seconds,
                                        created_at=when)


def get(client, path: str, **params):
    return client.get(f"/api/v1/insights/{path}", params)


def data(response, status: int = 200):
    assert response.status_code == status, response.content
    return response.json()["data"]


@pytest.fixture
def org_tz(tenant):
    """The tenant's organization billing zone set to New York (DST on 2026-03-08 and
    2026-11-01)."""
    tenant.org.timezone = "America/New_York"
    tenant.org.save(update_fields=["timezone"])
    return tenant
