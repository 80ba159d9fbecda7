"""The whole agent flow with no knowledge base: what runs on the embedded SQLite default
too (the knowledge indexer is PostgreSQL-only for now). Add this file to the Makefile's
EMBEDDED_TESTS to run it there:

    DATABASE_URL=sqlite:///var/x.sqlite3 pytest --ds=config.settings.test \
        tests/agents/test_runtime_embedded.py
"""

from __future__ import annotations

import pytest

from agents.usage.models import AIUsage
from platform_core.tenancy.context import tenant_context

from . import test_runtime
from .test_runtime import (
    AGENTS,
    CONVERSATIONS,
    ORDER_TOOL,
    agent_record,
    conversation,
    deploy_agent,
    inbound,
    replies,
)

# Fixtures shared with the sandbox tests.
hook = test_runtime.hook

pytestmark = pytest.mark.django_db


def test_sandbox_agent_answers_calls_a_tool_hands_off_and_resumes(
        tenant, hook, django_capture_on_commit_callbacks):
    capture = django_capture_on_commit_callbacks
    agent_id = deploy_agent(tenant, tools=[{**ORDER_TOOL, "webhook_url": hook.url}],
                            safety={"pii_redaction": True, "content_filter": True})
    first = inbound(tenant, capture, "Hello! What is the delivery status of order 12345?")
    conversation_id = first["conversation_id"]
    assert [b["arguments"] for b in hook.bodies()] == [{"order_id": "12345"}]
    assert replies(tenant, conversation_id) == ["Order 12345 shipped on Monday."]
    # No knowledge: the local engine answers from the prompt and the thread.
    inbound(tenant, capture, "You are the Acme store assistant?")
    assert len(replies(tenant, conversation_id)) == 2
    inbound(tenant, capture, "Please let me speak to a real person")
    record = conversation(tenant, conversation_id)
    assert record["ai_led"] is False
    assert record["handoff_status"] == "pending"
    inbound(tenant, capture, "Hello?")
    assert len(replies(tenant, conversation_id)) == 3  # the notice; then silence
    resume = tenant.client().post(f"{CONVERSATIONS}/{conversation_id}/agent/resume")
    assert resume.status_code == 200
    inbound(tenant, capture, "What is the delivery status of order 54321?")
    assert len(hook.requests) == 2
    assert len(replies(tenant, conversation_id)) == 4
    counters = agent_record(tenant, agent_id)
    assert counters["conversation_count"] == 1
    assert counters["active_conversations"] == 1
    with tenant_context(tenant.org):
        tokens = sum(AIUsage.objects.filter(agent_id=agent_id, feature="agent.reply")
                     .values_list("total_tokens", flat=True))
    assert tokens > 0
    assert counters["total_tokens"] == tokens
    assert tenant.client().get(AGENTS, {"status": "active"}).json()["data"][0]["id"] == agent_id
