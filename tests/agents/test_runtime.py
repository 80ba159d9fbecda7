"""A deployed agent answers end to end in test mode (the local engine): a sandbox inbound
message, the knowledge base with a cited answer, a validated tool call, the handoff rules,
`agent/resume`, metering and the maintained counters, a webhook deployment."""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from agents.agent_models import Agent
from agents.usage.models import AIBudget, AIUsage
from conversations.models import Conversation
from messaging.callback_secret import callback_secret_get
from platform_core.tenancy.context import tenant_context
from platform_core.webhooks.signing import verify_service_signature
from tests.knowledge.helpers import add_markdown, create_kb

pytestmark = pytest.mark.django_db

AGENTS = "/api/v1/agents"
CONVERSATIONS = "/api/v1/conversations"
INBOUND = "/api/v1/sandbox/inbound"
NUMBER = "+15005550006"
CUSTOMER = "+14155550101"

DOCS = {
    "Refunds": "# Refunds\n\nCustomers can get a refund within 30 days of purchase. The "
               "money goes back to the original card within five business days.",
    "Shipping": "# Shipping\n\nStandard delivery takes three to five days. Express "
                "delivery arrives the next business day for orders placed before noon.",
}
ORDER_TOOL = {"name": "order_status", "description": "Look up the delivery status of an order",
              "parameters": {"type": "object",
                             "properties": {"order_id": {"type": "string",
                                                         "pattern": "^[0-9]{5}$"}},
                             "required": ["order_id"], "additionalProperties": False}}


@dataclass
class HookServer:
    """A customer's endpoint over real HTTP: records requests, answers the script."""

    url: str = ""
    requests: list[dict[str, Any]] = field(default_factory=list)
    status: int = 200
    answer: Any = None
    hold: threading.Event | None = None  # set: the endpoint answers only once released

    def bodies(self) -> list[dict[str, Any]]:
        return [json.loads(r["body"]) for r in self.requests]


@pytest.fixture
def hook(settings):
    settings.ALLOW_PRIVATE_WEBHOOK_TARGETS = True
    server_state = HookServer(answer={"status": "shipped",
                                      "reply": "Order 12345 shipped on Monday."})

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args) -> None:
            return

        def do_POST(self) -> None:  # noqa: N802
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            if server_state.hold is not None:
                server_state.hold.wait(10)
            server_state.requests.append({"path": self.path, "body": raw,
                                          "headers": {k.lower(): v
                                                      for k, v in self.headers.items()}})
            payload = json.dumps(server_state.answer).encode()
            self.send_response(server_state.status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    server_state.url = f"http://127.0.0.1:{server.server_address[1]}/hook"
    try:
        yield server_state
    finally:
        if server_state.hold is not None:
            server_state.hold.set()
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


@pytest.fixture
def knowledge(tenant, django_capture_on_commit_callbacks):
    client = tenant.client()
    kb = create_kb(client)
    return {name: add_markdown(client, kb, name, text, django_capture_on_commit_callbacks)["id"]
            for name, text in DOCS.items()}


def deploy_agent(tenant, *, tools=None, safety=None, config=None, channel="sms",
                 **deploy) -> str:
    client = tenant.client()
    response = client.post(AGENTS, {
        "name": "Acme helper", "model": "gpt-4o-mini",
        "system_prompt": "You are the Acme store assistant.", "tools": tools or [],
        "safety_config": safety or {}, "config": config or {}}, format="json")
    assert response.status_code == 201, response.content
    agent_id = response.json()["data"]["id"]
    body = {"channel": channel, **deploy}
    if channel in ("sms", "whatsapp", "voice") and "phone_number" not in deploy:
        body["phone_number"] = NUMBER
    response = client.post(f"{AGENTS}/{agent_id}/deploy", body, format="json")
    assert response.status_code == 200, response.content
    return agent_id


def inbound(tenant, capture, text: str, *, to: str = NUMBER, sender: str = CUSTOMER) -> dict:
    with capture(execute=True):
        response = tenant.client().post(INBOUND, {"channel": "sms", "from": sender, "to": to,
                                                  "body": text}, format="json")
    assert response.status_code == 201, response.content
    return response.json()["data"]


def thread(tenant, conversation_id: str) -> list[dict]:
    response = tenant.client().get(f"{CONVERSATIONS}/{conversation_id}/messages",
                                   {"limit": 100})
    assert response.status_code == 200, response.content
    return response.json()["data"]


def replies(tenant, conversation_id: str) -> list[str]:
    return [m["body"] for m in thread(tenant, conversation_id) if m["direction"] == "outbound"]


def conversation(tenant, conversation_id: str) -> dict:
    return tenant.client().get(f"{CONVERSATIONS}/{conversation_id}").json()["data"]


def agent_turns(tenant, conversation_id: str) -> list[dict]:
    feed = tenant.client().get(f"{CONVERSATIONS}/{conversation_id}/activity",
                               {"limit": 100}).json()["data"]
    return [a["data"] for a in feed if a["kind"] == "agent_turn"]


def agent_record(tenant, agent_id: str) -> dict:
    return tenant.client().get(f"{AGENTS}/{agent_id}").json()["data"]


def test_knowledge_answer_cites_the_document_and_is_metered(
        tenant, knowledge, django_capture_on_commit_callbacks):
    agent_id = deploy_agent(tenant)
    message = inbound(tenant, django_capture_on_commit_callbacks,
                      "How many days do I have to ask for a refund?")
    conversation_id = message["conversation_id"]
    record = conversation(tenant, conversation_id)
    assert record["ai_led"] is True
    assert record["waiting_since"] is None
    [answer] = replies(tenant, conversation_id)
    assert "refund within 30 days" in answer
    assert answer.endswith("(Source: Refunds)")
    [turn] = agent_turns(tenant, conversation_id)
    assert turn["outcome"] == "replied"
    assert [c["document_id"] for c in turn["citations"]] == [knowledge["Refunds"]]
    with tenant_context(tenant.org):
        usage = list(AIUsage.objects.filter(feature="agent.reply"))
        assert Conversation.objects.get(pk=conversation_id).ai_agent_id == agent_id
    assert len(usage) == 1
    assert (usage[0].agent_id, usage[0].conversation_id, usage[0].channel,
            usage[0].model, usage[0].engine) == (agent_id, conversation_id, "sms", "local",
                                                 "local")
    assert usage[0].total_tokens > 0
    counters = agent_record(tenant, agent_id)
    assert counters["conversation_count"] == 1
    assert counters["active_conversations"] == 1
    assert counters["total_tokens"] == usage[0].total_tokens


def test_tool_is_called_with_validated_arguments_and_its_result_answers(
        tenant, knowledge, hook, django_capture_on_commit_callbacks):
    tool = {**ORDER_TOOL, "webhook_url": hook.url, "timeout_seconds": 5}
    agent_id = deploy_agent(tenant, tools=[tool])
    message = inbound(tenant, django_capture_on_commit_callbacks,
                      "What is the delivery status of my order 12345?")
    [call] = hook.bodies()
    assert call["tool"] == "order_status"
    assert call["arguments"] == {"order_id": "12345"}
    assert call["agent_id"] == agent_id
    assert call["conversation_id"] == message["conversation_id"]
    headers = hook.requests[0]["headers"]
    secret = callback_secret_get(tenant.org).secret
    assert verify_service_signature(secret, headers["x-service-signature"],
                                    hook.requests[0]["body"])
    assert replies(tenant, message["conversation_id"]) == ["Order 12345 shipped on Monday."]
    [turn] = agent_turns(tenant, message["conversation_id"])
    assert turn["tool_calls"] == [{"name": "order_status", "arguments": {"order_id": "12345"}}]


def test_arguments_not_matching_the_schema_never_reach_the_tool(
        tenant, knowledge, hook, django_capture_on_commit_callbacks):
    deploy_agent(tenant, tools=[{**ORDER_TOOL, "webhook_url": hook.url}])
    message = inbound(tenant, django_capture_on_commit_callbacks,
                      "What is the delivery status of my order 123?")  # not 5 digits
    assert hook.requests == []
    [turn] = agent_turns(tenant, message["conversation_id"])
    assert turn.get("tool_calls", []) == []


def test_a_failing_tool_hands_off(tenant, knowledge, hook,
                                  django_capture_on_commit_callbacks):
    hook.status = 500
    deploy_agent(tenant, tools=[{**ORDER_TOOL, "webhook_url": hook.url}])
    message = inbound(tenant, django_capture_on_commit_callbacks,
                      "What is the delivery status of my order 12345?")
    assert len(hook.requests) == 1
    packet = tenant.client().get(
        f"{CONVERSATIONS}/{message['conversation_id']}/handoff/packet").json()["data"]
    assert packet["reason_category"] == "tool_failed"
    assert packet["needs_human"] is True


def test_talk_to_a_human_hands_off_the_agent_stays_silent_then_resumes(
        tenant, knowledge, django_capture_on_commit_callbacks):
    capture = django_capture_on_commit_callbacks
    agent_id = deploy_agent(tenant)
    first = inbound(tenant, capture, "When will my parcel arrive with standard delivery?")
    conversation_id = first["conversation_id"]
    assert len(replies(tenant, conversation_id)) == 1
    assert agent_record(tenant, agent_id)["active_conversations"] == 1
    inbound(tenant, capture, "This is not helping, I want to talk to a human")
    record = conversation(tenant, conversation_id)
    assert record["ai_led"] is False
    assert record["handoff_status"] == "pending"
    packet = tenant.client().get(f"{CONVERSATIONS}/{conversation_id}/handoff/packet")
    assert packet.json()["data"]["reason_category"] == "customer_request"
    sent = replies(tenant, conversation_id)
    assert sent[-1] == "Let me connect you with a member of our team."
    assert agent_record(tenant, agent_id)["active_conversations"] == 0
    # A person holds the thread: the agent does not answer.
    inbound(tenant, capture, "How many days do I have to ask for a refund?")
    assert replies(tenant, conversation_id) == sent
    resumed = tenant.client().post(f"{CONVERSATIONS}/{conversation_id}/agent/resume")
    assert resumed.status_code == 200, resumed.content
    assert agent_record(tenant, agent_id)["active_conversations"] == 1
    inbound(tenant, capture, "How many days do I have to ask for a refund?")
    latest = replies(tenant, conversation_id)
    assert len(latest) == len(sent) + 1
    assert latest[-1].endswith("(Source: Refunds)")
    assert agent_record(tenant, agent_id)["conversation_count"] == 1


def test_low_retrieval_confidence_hands_off(tenant, knowledge,
                                           django_capture_on_commit_callbacks):
    deploy_agent(tenant, config={"handoff": {"min_confidence": 0.5}})
    message = inbound(tenant, django_capture_on_commit_callbacks,
                      "Which football team won the league in 1987?")
    conversation_id = message["conversation_id"]
    packet = tenant.client().get(f"{CONVERSATIONS}/{conversation_id}/handoff/packet")
    assert packet.json()["data"]["reason_category"] == "cant_understand"
    [turn] = agent_turns(tenant, conversation_id)
    assert turn["detail"]["why"] == "low_confidence"
    assert turn["detail"]["confidence"] < 0.5


def test_unresolved_turns_escalate_and_thanks_resets_the_count(
        tenant, knowledge, django_capture_on_commit_callbacks):
    capture = django_capture_on_commit_callbacks
    deploy_agent(tenant, config={"handoff": {"max_unresolved_turns": 2}})
    first = inbound(tenant, capture, "How many days do I have to ask for a refund?")
    conversation_id = first["conversation_id"]
    inbound(tenant, capture, "When will my parcel arrive with standard delivery?")
    inbound(tenant, capture, "Thanks! And when does express delivery arrive?")  # resets
    assert conversation(tenant, conversation_id)["ai_led"] is True
    inbound(tenant, capture, "When does the refund money reach my card?")
    assert conversation(tenant, conversation_id)["ai_led"] is True
    inbound(tenant, capture, "Can I get a refund after a month?")
    packet = tenant.client().get(f"{CONVERSATIONS}/{conversation_id}/handoff/packet")
    assert packet.json()["data"]["reason_category"] == "escalation_threshold"
    assert len(replies(tenant, conversation_id)) == 5  # 4 answers + the handoff notice


def test_content_filter_on_input(tenant, knowledge, django_capture_on_commit_callbacks):
    deploy_agent(tenant, safety={"content_filter": True})
    message = inbound(tenant, django_capture_on_commit_callbacks,
                      "you useless fucking bot, where is my refund?")
    packet = tenant.client().get(
        f"{CONVERSATIONS}/{message['conversation_id']}/handoff/packet").json()["data"]
    assert packet["reason_category"] == "policy_block"
    with tenant_context(tenant.org):
        assert not AIUsage.objects.filter(feature="agent.reply").exists()


def test_ai_cap_reached_hands_off_instead_of_dropping(tenant, knowledge,
                                                       django_capture_on_commit_callbacks):
    agent_id = deploy_agent(tenant)
    with tenant_context(tenant.org):
        AIBudget.objects.create(organization=tenant.org, daily_cap_cents=0)
    message = inbound(tenant, django_capture_on_commit_callbacks,
                      "How many days do I have to ask for a refund?")
    conversation_id = message["conversation_id"]
    record = conversation(tenant, conversation_id)
    assert record["handoff_status"] == "pending"
    assert record["ai_led"] is False
    [turn] = agent_turns(tenant, conversation_id)
    assert turn["detail"] == {"error": "AI_BUDGET_EXCEEDED"}
    assert turn["reason_category"] == "policy_block"
    assert replies(tenant, conversation_id) == ["Let me connect you with a member of our team."]
    assert agent_record(tenant, agent_id)["active_conversations"] == 0


def test_unbound_numbers_and_undeployed_agents_do_not_answer(
        tenant, knowledge, django_capture_on_commit_callbacks):
    capture = django_capture_on_commit_callbacks
    agent_id = deploy_agent(tenant)
    other = inbound(tenant, capture, "How many days do I have to ask for a refund?",
                    to="+15005550099", sender="+14155550177")
    assert replies(tenant, other["conversation_id"]) == []
    assert conversation(tenant, other["conversation_id"])["ai_led"] is False
    first = inbound(tenant, capture, "How many days do I have to ask for a refund?")
    assert len(replies(tenant, first["conversation_id"])) == 1
    assert tenant.client().post(f"{AGENTS}/{agent_id}/undeploy").status_code == 200
    # The thread it led goes to a person at the next message, nothing dropped.
    inbound(tenant, capture, "And for express delivery?")
    record = conversation(tenant, first["conversation_id"])
    assert record["handoff_status"] == "pending"
    assert record["ai_led"] is False


def test_pii_is_redacted_before_the_model(tenant, django_capture_on_commit_callbacks,
                                         monkeypatch):
    from agents import engine

    seen: list[list[dict]] = []
    real = engine.calls.complete

    def spy(organization, messages, **kwargs):
        seen.append(messages)
        return real(organization, messages, **kwargs)

    monkeypatch.setattr(engine, "complete", spy)
    deploy_agent(tenant, safety={"pii_redaction": True})
    inbound(tenant, django_capture_on_commit_callbacks,
            "My email is jane.doe@example.com and card 4111 1111 1111 1111, call +1 415 555 "
            "0123. Can you help?")
    text = json.dumps(seen)
    assert "jane.doe@example.com" not in text
    assert "4111" not in text
    assert "555 0123" not in text
    assert "[email]" in text
    assert "[card]" in text
    assert "[phone]" in text


def test_webhook_deployment_posts_the_turn_signed_and_sends_the_reply(
        tenant, hook, django_capture_on_commit_callbacks):
    hook.answer = {"reply": "Hello from your own system."}
    agent_id = deploy_agent(tenant, channel="webhook", webhook_url=hook.url)
    message = inbound(tenant, django_capture_on_commit_callbacks, "Hi, are you open today?")
    [turn] = hook.bodies()
    assert turn["type"] == "agent.turn"
    assert turn["agent_id"] == agent_id
    assert turn["message"]["text"] == "Hi, are you open today?"
    assert turn["thread"][-1]["text"] == "Hi, are you open today?"
    secret = callback_secret_get(tenant.org).secret
    assert verify_service_signature(secret, hook.requests[0]["headers"]["x-service-signature"],
                                    hook.requests[0]["body"])
    assert replies(tenant, message["conversation_id"]) == ["Hello from your own system."]
    with tenant_context(tenant.org):
        usage = AIUsage.objects.get(feature="agent.webhook")
    assert (usage.agent_id, usage.conversation_id) == (agent_id, message["conversation_id"])
    hook.answer = {"handoff": True, "reason_category": "policy_block"}
    inbound(tenant, django_capture_on_commit_callbacks, "Cancel everything")
    packet = tenant.client().get(
        f"{CONVERSATIONS}/{message['conversation_id']}/handoff/packet").json()["data"]
    assert packet["reason_category"] == "policy_block"


def test_deleting_the_agent_keeps_the_conversation_history(
        tenant, knowledge, django_capture_on_commit_callbacks):
    agent_id = deploy_agent(tenant)
    message = inbound(tenant, django_capture_on_commit_callbacks,
                      "How many days do I have to ask for a refund?")
    assert tenant.client().delete(f"{AGENTS}/{agent_id}").status_code == 204
    assert len(thread(tenant, message["conversation_id"])) == 2
    with tenant_context(tenant.org):
        assert not Agent.objects.filter(pk=agent_id).exists()


def test_a_tool_past_its_timeout_hands_off(tenant, knowledge, hook,
                                          django_capture_on_commit_callbacks):
    hook.hold = threading.Event()  # never answers within the tool's 1 s
    deploy_agent(tenant, tools=[{**ORDER_TOOL, "webhook_url": hook.url, "timeout_seconds": 1}])
    message = inbound(tenant, django_capture_on_commit_callbacks,
                      "What is the delivery status of my order 12345?")
    hook.hold.set()
    [turn] = agent_turns(tenant, message["conversation_id"])
    assert turn["reason_category"] == "tool_failed"
    assert "timeout" in turn["detail"]["error"]


def test_closing_the_thread_frees_the_agents_active_count(
        tenant, knowledge, django_capture_on_commit_callbacks):
    agent_id = deploy_agent(tenant)
    message = inbound(tenant, django_capture_on_commit_callbacks,
                      "How many days do I have to ask for a refund?")
    assert agent_record(tenant, agent_id)["active_conversations"] == 1
    closed = tenant.client().post(f"{CONVERSATIONS}/{message['conversation_id']}/close")
    assert closed.status_code == 200
    assert agent_record(tenant, agent_id)["active_conversations"] == 0
    assert agent_record(tenant, agent_id)["conversation_count"] == 1


def test_rcs_deployment_answers_the_whole_channel(tenant, knowledge,
                                                  django_capture_on_commit_callbacks):
    agent_id = deploy_agent(tenant, channel="rcs")
    with django_capture_on_commit_callbacks(execute=True):
        response = tenant.client().post(INBOUND, {
            "channel": "rcs", "from": CUSTOMER, "to": "sandbox_agent",
            "body": "How many days do I have to ask for a refund?"}, format="json")
    assert response.status_code == 201, response.content
    conversation_id = response.json()["data"]["conversation_id"]
    assert conversation(tenant, conversation_id)["ai_led"] is True
    [answer] = replies(tenant, conversation_id)
    assert answer.endswith("(Source: Refunds)")
    assert agent_record(tenant, agent_id)["conversation_count"] == 1


def test_an_unexpected_failure_hands_off_instead_of_dropping(
        tenant, knowledge, monkeypatch, django_capture_on_commit_callbacks):
    from agents.runtime import turn

    def broken(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(turn, "_reply", broken)
    deploy_agent(tenant)
    message = inbound(tenant, django_capture_on_commit_callbacks,
                      "How many days do I have to ask for a refund?")
    [turn_row] = agent_turns(tenant, message["conversation_id"])
    assert turn_row["reason_category"] == "cant_understand"
    assert turn_row["detail"] == {"error": "internal"}
    assert conversation(tenant, message["conversation_id"])["handoff_status"] == "pending"
