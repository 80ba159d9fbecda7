"""The hooks earlier apps left for an engine: template localization translates through
the organization's engine (sandbox text locally, the upstream when live, metered)."""

from __future__ import annotations

import json

import pytest

from agents.usage.models import AIUsage
from platform_core.tenancy.context import tenant_context
from templates import translation

pytestmark = pytest.mark.django_db


def test_local_engine_keeps_the_sandbox_translation(tenant):
    with tenant_context(tenant.org):
        assert translation.translate(["Hi {{1}}"], "en", "fr") == ["[fr] Hi {{1}}"]


def test_live_engine_translates_through_upstream(live_tenant, upstream):
    upstream.script = [(200, upstream.reply(json.dumps(
        {"translations": ["Bonjour {{1}}", "Au revoir"]})))]
    with tenant_context(live_tenant.org):
        result = translation.translate(["Hello {{1}}", "Goodbye"], "en", "fr")
    assert result == ["Bonjour {{1}}", "Au revoir"]
    sent = upstream.received[0]
    assert sent["response_format"] == {"type": "json_object"}
    assert "0: Hello {{1}}\n1: Goodbye" in sent["messages"][1]["content"]
    assert AIUsage.objects.for_organization(live_tenant.org).get().feature == "translate"


def test_live_translation_dropping_a_placeholder_is_refused(live_tenant, upstream):
    upstream.script = [(200, upstream.reply(json.dumps({"translations": ["Bonjour"]})))]
    with tenant_context(live_tenant.org), pytest.raises(translation.TranslationError):
        translation.translate(["Hello {{1}}"], "en", "fr")


def test_segment_autopilot_asks_upstream_when_the_rules_do_not_understand(live_tenant,
                                                                          upstream):
    client = live_tenant.client()
    understood = client.post("/api/v1/contacts/segments/autopilot",
                             {"description": "contacts tagged vip"}, format="json")
    assert understood.status_code == 200, understood.content
    assert upstream.received == []  # the rules answered: no model call
    tree = {"op": "and", "rules": [{"field": "tags", "operator": "eq", "value": "vip"}]}
    upstream.script = [(200, upstream.reply(json.dumps(tree)))]
    response = client.post("/api/v1/contacts/segments/autopilot",
                           {"description": "the ones my boss likes"}, format="json")
    assert response.status_code == 200, response.content
    assert response.json()["data"]["filters"] == tree
    assert upstream.received[0]["messages"][1]["content"] == "the ones my boss likes"
    assert AIUsage.objects.for_organization(live_tenant.org).get().feature == (
        "segment_autopilot")


def test_segment_suggestions_with_the_local_engine_are_the_signal_ones(tenant):
    response = tenant.client().post("/api/v1/segments/auto-suggest", {}, format="json")
    assert response.status_code == 200, response.content
    assert response.json()["data"]["llm_dropped_count"] >= 0
    assert not AIUsage.objects.for_organization(tenant.org).exists()
