"""Metering and limits: the AI budget caps refuse a call before the model is called, the
daily ledger adds up to the usage rows, one AI rate limit per organization over all the
/ai operations, and the `ai:write` scope (held by the agent role, not by viewers)."""

from __future__ import annotations

import pytest
import time_machine

from agents.usage.models import AIBudget, AISpendDay, AIUsage
from platform_core.tenancy.context import tenant_context
from tests.platform_core.accounts.conftest import PASSWORD, add_member, key_client, make_key

from .conftest import CHAT, EMBEDDINGS

pytestmark = pytest.mark.django_db


def set_budget(tenant, **caps) -> None:
    with tenant_context(tenant.org):
        AIBudget.objects.update_or_create(organization=tenant.org, defaults=caps)


def chat(client, text="Hello there, how are you?", **extra):
    return client.post(CHAT, {"messages": [{"role": "user", "content": text}], **extra},
                       format="json")


def test_ledger_adds_up_usage_rows(tenant):
    client = tenant.client()
    for text in ("one", "two words", "and three words"):
        assert chat(client, text).status_code == 200
    assert client.post(EMBEDDINGS, {"input": ["a", "b"]}, format="json").status_code == 200
    rows = list(AIUsage.objects.for_organization(tenant.org))
    day = AISpendDay.objects.for_organization(tenant.org).get()
    assert day.calls == 4
    assert day.cost_cents == sum(r.cost_cents for r in rows)
    assert day.total_tokens == sum(r.total_tokens for r in rows)


def test_daily_cap_refuses_before_the_model_is_called(tenant):
    set_budget(tenant, daily_cap_cents=2)
    client = tenant.client()
    assert chat(client).status_code == 200  # 1 cent (rounded up)
    assert chat(client).status_code == 200  # 2 cents: at the cap, not past it
    refused = chat(client)
    assert refused.status_code == 402
    error = refused.json()["error"]
    assert error["code"] == "AI_BUDGET_EXCEEDED"
    assert error["details"] == {"cap": "daily", "cap_cents": 2, "spent_cents": 2,
                                "estimated_cost_cents": 1}
    assert AIUsage.objects.for_organization(tenant.org).count() == 2
    # Every metered operation is refused the same way.
    for path, body in ((EMBEDDINGS, {"input": "x"}), ("/api/v1/ai/analyze", {"text": "x"})):
        assert client.post(path, body, format="json").status_code == 402
    set_budget(tenant, daily_cap_cents=None)
    assert chat(client).status_code == 200


def test_monthly_cap_and_live_upstream_untouched(live_tenant, upstream):
    set_budget(live_tenant, monthly_cap_cents=0)
    response = chat(live_tenant.client())
    assert response.status_code == 402
    assert response.json()["error"]["details"]["cap"] == "monthly"
    assert upstream.received == []  # refused before the model was called


def test_estimate_counts_max_tokens(tenant):
    # 8192 completion tokens at 200 cents per million could cost 2 cents: past a 1-cent cap.
    set_budget(tenant, daily_cap_cents=1)
    assert chat(tenant.client(), max_tokens=8192).status_code == 402
    assert chat(tenant.client(), max_tokens=10).status_code == 200


def test_default_caps_from_settings(tenant, settings):
    settings.AI_DAILY_CAP_CENTS = 0
    assert chat(tenant.client()).status_code == 402


@time_machine.travel("2026-11-28 12:00:10Z", tick=False)  # one fixed-window minute
def test_one_ai_rate_limit_per_organization(tenant, settings):
    settings.AI_RATE_LIMIT_PER_MINUTE = 3
    client, other_key = tenant.client(), key_client(make_key(tenant.org, created_by=None))
    assert chat(client).status_code == 200
    assert client.post(EMBEDDINGS, {"input": "x"}, format="json").status_code == 200
    assert other_key.post("/api/v1/ai/analyze", {"text": "hi"},
                          format="json").status_code == 200
    limited = other_key.post(EMBEDDINGS, {"input": "x"}, format="json")
    assert limited.status_code == 429
    assert limited.json()["error"]["code"] == "RATE_LIMITED"
    assert int(limited["Retry-After"]) >= 1
    assert AIUsage.objects.for_organization(tenant.org).count() == 3


def test_scope_ai_write(tenant):
    reader = key_client(make_key(tenant.org, created_by=None, scopes=("contacts:read",)))
    response = reader.post(EMBEDDINGS, {"input": "x"}, format="json")
    assert response.status_code == 403
    assert response.json()["error"]["code"] == "INSUFFICIENT_PERMISSIONS"
    writer = key_client(make_key(tenant.org, created_by=None, scopes=("ai:write",)))
    assert writer.post(EMBEDDINGS, {"input": "x"}, format="json").status_code == 200


def test_agent_role_may_use_ai_viewer_may_not(tenant):
    agent = add_member(tenant, "agent", email="agent@example.com")
    viewer = add_member(tenant, "viewer", email="viewer@example.com")
    agent_client = tenant.session_client(agent, PASSWORD)
    assert chat(agent_client).status_code == 200
    viewer_client = tenant.session_client(viewer, PASSWORD)
    assert chat(viewer_client).status_code == 403
