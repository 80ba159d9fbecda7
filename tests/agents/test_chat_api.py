"""POST /api/v1/ai/chat/completions with the local engine (Document 3, 4.2 and 8;
0-conventions 10): the OpenAI object plus meta, validation answering 400, streaming."""

from __future__ import annotations

import json

import pytest

from agents.engine import minilm
from agents.usage.models import AIUsage

from .conftest import CHAT

pytestmark = pytest.mark.django_db


def _tokens(text: str) -> int:
    return minilm.count_tokens(text)


def test_completion_is_the_openai_object_plus_meta(tenant):
    messages = [{"role": "system", "content": "Our shop opens at 9am. Delivery takes 3 days."},
                {"role": "user", "content": "How long does delivery take?"}]
    response = tenant.client().post(CHAT, {"messages": messages}, format="json")
    assert response.status_code == 200, response.content
    body = response.json()
    assert set(body) >= {"id", "object", "created", "model", "choices", "usage", "meta"}
    assert body["object"] == "chat.completion"
    assert body["id"].startswith("chatcmpl-")
    assert body["model"] == "local"
    choice = body["choices"][0]
    assert choice["message"]["role"] == "assistant"
    # The nearest context sentence to the question, by the embeddings.
    assert choice["message"]["content"] == "Delivery takes 3 days."
    assert choice["finish_reason"] == "stop"
    expected_prompt = sum(_tokens(m["content"]) + 3 for m in messages)
    assert body["usage"] == {"prompt_tokens": expected_prompt,
                             "completion_tokens": _tokens("Delivery takes 3 days."),
                             "total_tokens": expected_prompt + _tokens("Delivery takes 3 days.")}
    assert body["meta"]["engine"] == "local"
    assert body["meta"]["request_id"]
    assert body["meta"]["cost_cents"] == 1


def test_usage_row_to_the_token_and_cent(tenant):
    text = "Tell me about your plans. " * 200  # long enough to cost more than a cent
    response = tenant.client().post(CHAT, {"messages": [{"role": "user", "content": text}]},
                                    format="json")
    assert response.status_code == 200
    usage = response.json()["usage"]
    row = AIUsage.objects.for_organization(tenant.org).get()
    assert (row.prompt_tokens, row.completion_tokens, row.total_tokens) == (
        usage["prompt_tokens"], usage["completion_tokens"], usage["total_tokens"])
    assert usage["prompt_tokens"] == _tokens(text) + 3
    # local: 100 cents per million prompt tokens, 200 per million completion, rounded up.
    expected = -(-(usage["prompt_tokens"] * 100 + usage["completion_tokens"] * 200)
                 // 1_000_000)
    assert row.cost_cents == expected == response.json()["meta"]["cost_cents"]
    assert (row.feature, row.engine, row.model) == ("chat.completions", "local", "local")


def test_json_mode_answers_json(tenant):
    response = tenant.client().post(CHAT, {
        "messages": [{"role": "user", "content": "I love the new app, it is fast and easy."}],
        "response_format": {"type": "json_object"}}, format="json")
    assert response.status_code == 200
    answer = json.loads(response.json()["choices"][0]["message"]["content"])
    assert answer["sentiment"] == "positive"
    schema = {"type": "object", "properties": {"title": {"type": "string"},
                                               "score": {"type": "integer"},
                                               "tags": {"type": "array"},
                                               "level": {"enum": ["low", "high"]}}}
    response = tenant.client().post(CHAT, {
        "messages": [{"role": "user", "content": "Summarise this."}],
        "response_format": {"type": "json_schema", "json_schema": {"name": "x",
                                                                    "schema": schema}}},
        format="json")
    answer = json.loads(response.json()["choices"][0]["message"]["content"])
    assert set(answer) == {"title", "score", "tags", "level"}
    assert (answer["score"], answer["tags"], answer["level"]) == (0, [], "low")


def test_max_tokens_cuts_the_answer(tenant):
    response = tenant.client().post(CHAT, {
        "messages": [{"role": "user", "content": "A long message about many things. " * 5}],
        "max_tokens": 3}, format="json")
    body = response.json()
    assert body["choices"][0]["finish_reason"] == "length"
    assert body["usage"]["completion_tokens"] == 3


@pytest.mark.parametrize(("payload", "field"), [
    ({}, "messages"),
    ({"messages": []}, "messages"),
    ({"messages": [{"role": "user", "content": "x"}] * 51}, "messages"),
    ({"messages": [{"role": "robot", "content": "x"}]}, "messages.0.role"),
    ({"messages": [{"role": "user", "content": ""}]}, "messages.0.content"),
    ({"messages": [{"role": "user", "content": "x" * 100_001}]}, "messages.0.content"),
    ({"messages": [{"role": "user", "content": 5}]}, "messages.0.content"),
    ({"messages": [{"role": "user", "content": "x"}], "temperature": 2.1}, "temperature"),
    ({"messages": [{"role": "user", "content": "x"}], "temperature": -0.1}, "temperature"),
    ({"messages": [{"role": "user", "content": "x"}], "max_tokens": 0}, "max_tokens"),
    ({"messages": [{"role": "user", "content": "x"}], "max_tokens": 8193}, "max_tokens"),
    ({"messages": [{"role": "user", "content": "x"}], "response_format": {"type": "xml"}},
     "response_format.type"),
    ({"messages": [{"role": "user", "content": "x"}], "stream": "yes"}, "stream"),
])
def test_invalid_body_is_400(tenant, payload, field):
    response = tenant.client().post(CHAT, payload, format="json")
    assert response.status_code == 400, response.content
    error = response.json()["error"]
    assert error["code"] == "VALIDATION_ERROR"
    assert field in [i["field"] for i in error["details"]["issues"]]
    assert not AIUsage.objects.for_organization(tenant.org).exists()


def test_limits_are_inclusive(tenant):
    messages = [{"role": "user", "content": "x"}] * 50
    response = tenant.client().post(CHAT, {"messages": messages, "temperature": 2,
                                           "max_tokens": 8192}, format="json")
    assert response.status_code == 200, response.content


def test_malformed_json_is_400(tenant):
    response = tenant.client().post(CHAT, b"{not json", content_type="application/json")
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "VALIDATION_ERROR"


def test_stream_answers_sse_chunks_ending_done(tenant):
    response = tenant.client().post(CHAT, {
        "messages": [{"role": "user", "content": "Please summarise: the order shipped today."}],
        "stream": True, "stream_options": {"include_usage": True}}, format="json")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/event-stream")
    raw = b"".join(response.streaming_content).decode()
    events = [line[6:] for line in raw.split("\n\n") if line.startswith("data: ")]
    assert events[-1] == "[DONE]"
    chunks = [json.loads(e) for e in events[:-1]]
    assert all(c["object"] == "chat.completion.chunk" for c in chunks)
    assert len({c["id"] for c in chunks}) == 1
    assert chunks[0]["choices"][0]["delta"]["role"] == "assistant"
    text = "".join(c["choices"][0]["delta"].get("content", "") for c in chunks if c["choices"])
    assert text.startswith("Local engine")
    assert chunks[-2]["choices"][0]["finish_reason"] == "stop"
    assert chunks[-1]["choices"] == []
    assert chunks[-1]["usage"]["completion_tokens"] == (
        minilm.count_tokens(text))
    row = AIUsage.objects.for_organization(tenant.org).get()
    assert row.completion_tokens == chunks[-1]["usage"]["completion_tokens"]
