"""The analysis and generation operations of /api/v1/ai with the local engine: their
documented shapes, tenant isolation (another organization's message or conversation is
404), validation, one usage row each."""

from __future__ import annotations

import pytest

from agents.usage.models import AIUsage
from messaging.models import Message
from platform_core.tenancy.context import tenant_context

from .conftest import conversation_with

pytestmark = pytest.mark.django_db

AI = "/api/v1/ai"
USAGE_KEYS = {"prompt_tokens", "completion_tokens", "total_tokens", "cost_cents"}


def post(tenant, route: str, body: dict | None = None):
    return tenant.client().post(f"{AI}/{route}", body or {}, format="json")


def ok(response) -> dict:
    assert response.status_code == 200, response.content
    data = response.json()["data"]
    assert (data["engine"], data["model"]) == ("local", "local")
    assert set(data["usage"]) == USAGE_KEYS
    assert data["usage"]["prompt_tokens"] > 0
    return data


def test_analyze(tenant):
    data = ok(post(tenant, "analyze", {"text": "I love this product! Can I buy two more "
                                               "licenses for my team?"}))
    assert data["sentiment"]["label"] == "positive"
    assert data["sentiment"]["score"] > 0
    assert data["intent"] == "sales"
    assert data["is_question"] is True
    assert "licenses" in data["keywords"]
    row = AIUsage.objects.for_organization(tenant.org).get()
    assert (row.feature, row.prompt_tokens, row.cost_cents) == (
        "analyze", data["usage"]["prompt_tokens"], data["usage"]["cost_cents"])
    negative = ok(post(tenant, "analyze", {"text": "This is terrible, the app is broken."}))
    assert negative["sentiment"]["label"] == "negative"
    negated = ok(post(tenant, "analyze", {"text": "The service was not good."}))
    assert negated["sentiment"]["label"] == "negative"


def test_analyze_message_and_isolation(tenant, other_tenant):
    with tenant_context(tenant.org):
        message = Message.objects.create(organization=tenant.org, channel="sms",
                                         direction="inbound", to="+14155550100",
                                         body="Where is my package? It has not arrived.",
                                         status="received")
    data = ok(post(tenant, f"analyze-message/{message.pk}"))
    assert (data["message_id"], data["channel"], data["direction"]) == (
        message.pk, "sms", "inbound")
    assert data["intent"] == "order_status"
    assert AIUsage.objects.for_organization(tenant.org).get().channel == "sms"
    stranger = other_tenant.client().post(f"{AI}/analyze-message/{message.pk}", {},
                                          format="json")
    assert stranger.status_code == 404
    assert post(tenant, "analyze-message/msg_unknown").status_code == 404
    assert not AIUsage.objects.for_organization(other_tenant.org).exists()


def test_classify_intent_default_and_custom_labels(tenant):
    data = ok(post(tenant, "classify-intent", {"text": "Please cancel my subscription"}))
    assert data["intent"] == "cancellation"
    assert data["ranking"][0] == {"intent": "cancellation", "score": data["confidence"]}
    custom = ok(post(tenant, "classify-intent", {
        "text": "My card was declined at checkout",
        "intents": {"payments": ["My payment failed", "The card does not work"],
                    "shipping": ["When does my parcel arrive?"]}}))
    assert custom["intent"] == "payments"
    assert [r["intent"] for r in custom["ranking"]] == ["payments", "shipping"]


def test_summarize_conversation_and_suggest_reply(tenant, other_tenant):
    conversation = conversation_with(tenant, [
        ("inbound", "Hi, I was charged twice for my order this month."),
        ("outbound", "Sorry about that! Let me check your invoice."),
        ("inbound", "Thanks. Can you refund the second charge?"),
    ])
    summary = ok(post(tenant, "summarize-conversation", {"conversation_id": conversation}))
    assert summary["conversation_id"] == conversation
    assert (summary["message_count"], summary["customer_message_count"]) == (3, 2)
    assert summary["summary"] == " ".join(summary["key_points"])
    assert "charged twice" in summary["summary"]
    reply = ok(post(tenant, "suggest-reply", {"conversation_id": conversation}))
    assert reply["intent"] == "billing"
    assert reply["suggestions"][0]["intent"] == "billing"
    rows = AIUsage.objects.for_organization(tenant.org).order_by("created_at")
    assert [(r.feature, r.conversation_id, r.channel) for r in rows] == [
        ("summarize_conversation", conversation, "sms"), ("suggest_reply", conversation, "sms")]
    for route in ("summarize-conversation", "suggest-reply"):
        response = other_tenant.client().post(f"{AI}/{route}",
                                              {"conversation_id": conversation}, format="json")
        assert response.status_code == 404, route


def test_generation_operations(tenant):
    content = ok(post(tenant, "generate-content", {
        "prompt": "announce our spring sale with 20% off all shoes", "channel": "sms",
        "tone": "friendly", "max_length": 60}))
    assert content["characters"] == len(content["content"]) <= 60
    assert content["sms_segments"] == 1
    improved = ok(post(tenant, "improve-text", {"text": "hello  i cant  come today today"}))
    assert improved["text"] == "Hello I can't come today."
    assert "removed repeated words" in improved["changes"]
    translated = ok(post(tenant, "translate", {"texts": ["Hello {{1}}", "Bye"],
                                               "target_language": "fr"}))
    assert translated["translations"] == ["[fr] Hello {{1}}", "[fr] Bye"]
    assert "sandbox" in translated["note"]
    campaign = ok(post(tenant, "compose-campaign", {
        "goal": "Win back customers who have not ordered shoes since spring.",
        "channel": "email"}))
    assert campaign["channel"] == "email"
    assert campaign["subject"]
    assert campaign["message"]


def test_optimize_channel_ranks_on_real_figures(tenant):
    with tenant_context(tenant.org):
        for i in range(20):
            Message.objects.create(organization=tenant.org, channel="sms", to=f"+1415555{i:04d}",
                                   status="failed" if i < 10 else "delivered")
            Message.objects.create(organization=tenant.org, channel="whatsapp",
                                   to=f"+1415555{i:04d}", status="delivered")
    data = ok(post(tenant, "optimize-channel", {"channels": ["sms", "whatsapp"]}))
    assert data["recommended_channel"] == "whatsapp"
    sms = next(r for r in data["ranking"] if r["channel"] == "sms")
    assert (sms["sent"], sms["delivered"], sms["failed"], sms["delivery_rate"]) == (
        20, 10, 10, 0.5)


def test_dashboard_insights(tenant):
    with tenant_context(tenant.org):
        Message.objects.create(organization=tenant.org, channel="sms", to="+14155550100",
                               status="delivered")
    data = ok(post(tenant, "dashboard-insights", {"days": 7}))
    assert data["period_days"] == 7
    assert data["figures"]["sent"] == 1
    assert data["figures"]["delivered"] == 1
    assert {i["key"] for i in data["insights"]} >= {"outbound_volume", "delivery_rate"}


@pytest.mark.parametrize(("route", "body"), [
    ("analyze", {}), ("analyze", {"text": ""}), ("analyze", {"text": 5}),
    ("classify-intent", {"text": "x", "intents": {}}),
    ("summarize-conversation", {}), ("suggest-reply", {"conversation_id": 7}),
    ("dashboard-insights", {"days": 0}), ("generate-content", {"prompt": "x", "channel": "fax"}),
    ("improve-text", {"text": "x", "tone": "angry"}),
    ("translate", {"text": "x"}), ("translate", {"target_language": "fr"}),
    ("translate", {"text": "x", "texts": ["y"], "target_language": "fr"}),
    ("compose-campaign", {"goal": ""}), ("optimize-channel", {"days": 400}),
])
def test_invalid_bodies_are_422(tenant, route, body):
    response = post(tenant, route, body)
    assert response.status_code == 422, (route, response.content)
    assert response.json()["error"]["code"] == "VALIDATION_ERROR"
    assert not AIUsage.objects.for_organization(tenant.org).exists()
