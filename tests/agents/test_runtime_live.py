"""The live engine path of an agent turn against the OpenAI-compatible fake upstream
(tests/agents/conftest.py): tool calls chosen by the model, arguments validated (a wrong
one is told back to the model, never sent to the tool), results fed back, the final answer
sent with its citations; PII redacted before the upstream sees it."""

from __future__ import annotations

import json

import pytest

from agents import engine
from agents.usage.models import AIUsage
from platform_core.tenancy.context import tenant_context

from . import test_runtime
from .test_runtime import (
    ORDER_TOOL,
    agent_turns,
    deploy_agent,
    inbound,
    replies,
)

# Fixtures shared with the sandbox tests.
hook = test_runtime.hook
knowledge = test_runtime.knowledge

pytestmark = pytest.mark.django_db


@pytest.fixture
def live(upstream, monkeypatch):
    """The live engine for the (sandbox) organization: messaging stays in test mode while
    every model call goes to the fake upstream."""
    monkeypatch.setattr(engine, "get_engine", lambda organization: engine._live)
    return upstream


def _call(call_id: str, arguments: str) -> list[dict]:
    return [{"id": call_id, "type": "function",
             "function": {"name": "order_status", "arguments": arguments}}]


def test_live_tool_calls_are_validated_executed_and_fed_back(
        tenant, live, hook, django_capture_on_commit_callbacks):
    live.script = [
        (200, live.reply(None, tool_calls=_call("call_1", '{"order_id": "12"}'))),
        (200, live.reply(None, tool_calls=_call("call_2", '{"order_id": "12345"}'))),
        (200, live.reply("Your order 12345 shipped on Monday.", prompt_tokens=40,
                         completion_tokens=9)),
    ]
    agent_id = deploy_agent(tenant, tools=[{**ORDER_TOOL, "webhook_url": hook.url}])
    message = inbound(tenant, django_capture_on_commit_callbacks,
                      "Where is my order 12345?")
    conversation_id = message["conversation_id"]
    assert [b["arguments"] for b in hook.bodies()] == [{"order_id": "12345"}]
    chats = [r for r in live.received if r["path"].endswith("/chat/completions")]
    assert len(chats) == 3
    assert chats[0]["model"] == "gpt-4o-mini"
    assert chats[0]["tools"][0]["function"]["name"] == "order_status"
    assert chats[0]["tools"][0]["function"]["parameters"] == ORDER_TOOL["parameters"]
    assert chats[0]["messages"][0]["role"] == "system"
    assert "Acme store assistant" in chats[0]["messages"][0]["content"]
    assert chats[0]["messages"][-1] == {"role": "user", "content": "Where is my order 12345?"}
    refused = chats[1]["messages"][-1]
    assert refused["role"] == "tool"
    assert refused["tool_call_id"] == "call_1"
    assert "invalid arguments" in refused["content"]
    fed = chats[2]["messages"][-1]
    assert fed["tool_call_id"] == "call_2"
    assert json.loads(fed["content"])["status"] == "shipped"
    assert chats[2]["messages"][-2]["tool_calls"][0]["id"] == "call_2"
    assert replies(tenant, conversation_id) == ["Your order 12345 shipped on Monday."]
    [turn] = agent_turns(tenant, conversation_id)
    assert turn["tool_calls"] == [{"name": "order_status", "arguments": {"order_id": "12345"}}]
    with tenant_context(tenant.org):
        usage = list(AIUsage.objects.filter(feature="agent.reply").order_by("created_at"))
    assert len(usage) == 3
    assert {(u.agent_id, u.conversation_id, u.channel, u.engine, u.model) for u in usage} == {
        (agent_id, conversation_id, "sms", "live", "gpt-4o-mini")}
    assert usage[-1].total_tokens == 49
    total = sum(u.total_tokens for u in usage)
    assert tenant.client().get(f"/api/v1/agents/{agent_id}").json()["data"][
        "total_tokens"] == total


def test_live_answer_cites_the_sources_it_names_and_sees_no_pii(
        tenant, live, knowledge, django_capture_on_commit_callbacks):
    live.script = [(200, live.reply("You can get a refund within 30 days [1]."))]
    deploy_agent(tenant, safety={"pii_redaction": True})
    message = inbound(tenant, django_capture_on_commit_callbacks,
                      "I am jane.doe@example.com, how long do I have to ask for a refund?")
    [answer] = replies(tenant, message["conversation_id"])
    assert answer == "You can get a refund within 30 days. (Source: Refunds)"
    [turn] = agent_turns(tenant, message["conversation_id"])
    assert [c["document_id"] for c in turn["citations"]] == [knowledge["Refunds"]]
    sent = json.dumps(live.received)
    assert "jane.doe@example.com" not in sent
    assert "[email], how long" in sent
    assert "[1] # Refunds" in sent or "[1] Customers can get a refund" in sent


def test_live_tool_timeout_or_error_hands_off(tenant, live, hook,
                                              django_capture_on_commit_callbacks):
    hook.status = 503
    live.script = [(200, live.reply(None, tool_calls=_call("call_1", '{"order_id": "12345"}')))]
    deploy_agent(tenant, tools=[{**ORDER_TOOL, "webhook_url": hook.url}])
    message = inbound(tenant, django_capture_on_commit_callbacks, "Where is my order 12345?")
    packet = tenant.client().get(
        f"/api/v1/conversations/{message['conversation_id']}/handoff/packet").json()["data"]
    assert packet["reason_category"] == "tool_failed"
    assert len(hook.requests) == 1
