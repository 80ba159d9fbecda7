"""Contract of the live engine against an OpenAI-compatible server started by the test
(real HTTP, in-process): what it sends (model, messages, tools, JSON mode, the key), what
it passes back (tool calls, stream), metering from upstream's usage, retries, the breaker."""

from __future__ import annotations

import json

import pytest

from agents.usage.models import AIUsage
from platform_core.net.provider_client import CircuitBreaker

from .conftest import CHAT, EMBEDDINGS

pytestmark = pytest.mark.django_db

TOOLS = [{"type": "function", "function": {
    "name": "get_order", "description": "Look an order up",
    "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}}}}}]


def test_sandbox_organization_stays_local(tenant, upstream):
    response = tenant.client().post(CHAT, {"messages": [{"role": "user", "content": "Hi"}]},
                                    format="json")
    assert response.json()["model"] == "local"
    assert upstream.received == []


def test_completion_passes_model_messages_tools_through(live_tenant, upstream):
    call = {"id": "call_1", "type": "function",
            "function": {"name": "get_order", "arguments": '{"order_id": "A1"}'}}
    upstream.script = [(200, upstream.reply(None, tool_calls=[call], prompt_tokens=40,
                                            completion_tokens=10))]
    messages = [{"role": "system", "content": "You are a shop assistant."},
                {"role": "user", "content": "Where is order A1?"}]
    response = live_tenant.client().post(CHAT, {
        "model": "gpt-4o-mini", "messages": messages, "tools": TOOLS, "temperature": 0.2,
        "max_tokens": 100}, format="json")
    assert response.status_code == 200, response.content
    sent = upstream.received[0]
    assert sent["path"] == "/v1/chat/completions"
    assert sent["model"] == "gpt-4o-mini"
    assert sent["messages"] == messages
    assert sent["tools"] == TOOLS
    assert (sent["temperature"], sent["max_tokens"]) == (0.2, 100)
    assert upstream.headers[0]["authorization"] == "Bearer sk-upstream-test"
    body = response.json()
    assert body["model"] == "gpt-4o-mini"
    assert body["choices"][0]["message"]["tool_calls"] == [call]
    assert body["choices"][0]["finish_reason"] == "tool_calls"
    assert body["usage"] == {"prompt_tokens": 40, "completion_tokens": 10, "total_tokens": 50}
    row = AIUsage.objects.for_organization(live_tenant.org).get()
    # gpt-4o-mini: 15 cents per million prompt tokens, 60 per million completion: 1 cent.
    assert (row.engine, row.model, row.prompt_tokens, row.completion_tokens,
            row.cost_cents) == ("live", "gpt-4o-mini", 40, 10, 1)
    assert body["meta"] == {**body["meta"], "engine": "live", "cost_cents": 1}


def test_cost_from_the_price_table(live_tenant, upstream, settings):
    settings.AI_MODEL_PRICES = {"gpt-4o-mini": [1_000_000, 2_000_000]}  # 1 and 2 cents a token
    upstream.script = [(200, upstream.reply("ok", prompt_tokens=7, completion_tokens=3))]
    response = live_tenant.client().post(CHAT, {"messages": [{"role": "user", "content": "x"}]},
                                         format="json")
    assert response.json()["meta"]["cost_cents"] == 7 + 6
    assert AIUsage.objects.for_organization(live_tenant.org).get().cost_cents == 13


def test_json_mode_passes_through(live_tenant, upstream):
    upstream.script = [(200, upstream.reply('{"a": 1}'))]
    response = live_tenant.client().post(CHAT, {
        "messages": [{"role": "user", "content": "json please"}],
        "response_format": {"type": "json_object"}}, format="json")
    assert upstream.received[0]["response_format"] == {"type": "json_object"}
    assert json.loads(response.json()["choices"][0]["message"]["content"]) == {"a": 1}


def test_stream_passes_through_and_meters_upstream_usage(live_tenant, upstream):
    base = {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "gpt-4o-mini"}
    upstream.script = [("stream", [
        {**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": "Hel"}}]},
        {**base, "choices": [{"index": 0, "delta": {"content": "lo"}}]},
        {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
        {**base, "choices": [], "usage": {"prompt_tokens": 9, "completion_tokens": 2,
                                          "total_tokens": 11}}])]
    response = live_tenant.client().post(CHAT, {
        "messages": [{"role": "user", "content": "Say hello"}], "stream": True},
        format="json")
    raw = b"".join(response.streaming_content).decode()
    assert upstream.received[0]["stream"] is True
    assert upstream.received[0]["stream_options"] == {"include_usage": True}
    events = [e[6:] for e in raw.split("\n\n") if e.startswith("data: ")]
    assert events[-1] == "[DONE]"
    chunks = [json.loads(e) for e in events[:-1]]
    assert "".join(c["choices"][0]["delta"].get("content", "") for c in chunks) == "Hello"
    row = AIUsage.objects.for_organization(live_tenant.org).get()
    assert (row.prompt_tokens, row.completion_tokens) == (9, 2)


def test_embeddings_upstream_when_configured(live_tenant, upstream, settings):
    response = live_tenant.client().post(EMBEDDINGS, {"input": "hello"}, format="json")
    assert len(response.json()["data"][0]["embedding"]) == 384  # local MiniLM by default
    assert upstream.received == []
    settings.LLM_EMBEDDING_MODEL = "text-embedding-3-small"
    upstream.script = [(200, None)]
    response = live_tenant.client().post(EMBEDDINGS, {"input": ["a", "b"]}, format="json")
    assert upstream.received[0]["model"] == "text-embedding-3-small"
    assert upstream.received[0]["input"] == ["a", "b"]
    body = response.json()
    assert [d["index"] for d in body["data"]] == [0, 1]
    assert body["model"] == "text-embedding-3-small"
    assert body["usage"]["prompt_tokens"] == 7
    rows = AIUsage.objects.for_organization(live_tenant.org).order_by("created_at")
    assert [(r.engine, r.model) for r in rows] == [
        ("local", "all-MiniLM-L6-v2"), ("live", "text-embedding-3-small")]


def test_upstream_5xx_is_retried_then_503_and_opens_the_breaker(live_tenant, upstream,
                                                                 settings):
    settings.PROVIDER_BREAKER_THRESHOLD = 2
    upstream.script = [(500, {"error": {"message": "boom"}})]
    client = live_tenant.client()
    response = client.post(CHAT, {"messages": [{"role": "user", "content": "x"}]},
                           format="json")
    assert response.status_code == 503
    assert response.json()["error"]["code"] == "PROVIDER_UNAVAILABLE"
    assert len(upstream.received) == 3  # the first try and LLM_MAX_RETRIES=2 retries
    client.post(CHAT, {"messages": [{"role": "user", "content": "x"}]}, format="json")
    assert len(upstream.received) == 6
    # Two failed calls opened the breaker: the next one fails at once, upstream untouched.
    response = client.post(CHAT, {"messages": [{"role": "user", "content": "x"}]},
                           format="json")
    assert response.status_code == 503
    assert response.json()["error"]["details"]["reason"] == "circuit_open"
    assert response["Retry-After"]
    assert len(upstream.received) == 6
    assert not AIUsage.objects.for_organization(live_tenant.org).exists()
    CircuitBreaker("llm", upstream.base_url.split("/")[2]).reset()


def test_upstream_429_then_success_is_retried(live_tenant, upstream):
    upstream.script = [(429, {"error": {"message": "slow down"}}),
                       (200, upstream.reply("after retry"))]
    response = live_tenant.client().post(CHAT, {"messages": [{"role": "user", "content": "x"}]},
                                         format="json")
    assert response.status_code == 200
    assert response.json()["choices"][0]["message"]["content"] == "after retry"
    assert len(upstream.received) == 2


def test_upstream_4xx_is_502_with_its_status(live_tenant, upstream):
    upstream.script = [(400, {"error": {"message": "bad model"}})]
    response = live_tenant.client().post(CHAT, {"messages": [{"role": "user", "content": "x"}]},
                                         format="json")
    assert response.status_code == 502
    error = response.json()["error"]
    assert error["code"] == "AI_UPSTREAM_ERROR"
    assert error["details"]["upstream_status"] == 400
    assert len(upstream.received) == 1  # a refusal is not retried


def test_task_helper_uses_json_mode_and_keeps_the_shape(live_tenant, upstream):
    upstream.script = [(200, upstream.reply(json.dumps({
        "sentiment": {"label": "negative", "score": -0.8}, "intent": "complaint",
        "keywords": 5})))]  # a wrong type is ignored: the computed value stays
    response = live_tenant.client().post("/api/v1/ai/analyze",
                                         {"text": "The delivery was late again."},
                                         format="json")
    assert response.status_code == 200, response.content
    data = response.json()["data"]
    assert upstream.received[0]["response_format"] == {"type": "json_object"}
    assert data["sentiment"] == {"label": "negative", "score": -0.8}
    assert data["intent"] == "complaint"
    assert isinstance(data["keywords"], list)
    assert (data["engine"], data["model"]) == ("live", "gpt-4o-mini")
    assert data["usage"]["prompt_tokens"] == 12
