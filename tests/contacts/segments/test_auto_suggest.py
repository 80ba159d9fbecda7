"""Auto-suggest: ideas from event volume, tags and click engagement; empty ones dropped
and counted in `llm_dropped_count`; nothing stored."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from contacts.segments.filters import parse_filters
from contacts.segments.models import Segment
from contacts.segments.suggest import MAX_LIMIT
from platform_core.tenancy.context import tenant_context

from .helpers import SEGMENTS, SUGGEST, click, contact, link, member_ids, track


@pytest.fixture
def busy_org(tenant):
    """Old, fully tagged contacts (so "new contacts" and "no tags yet" match nothing)."""
    buyers = [contact(tenant, first_name=f"B{i}", email=f"b{i}@example.com",
                      phone=f"+1415555010{i}", tags=["vip"], created_days_ago=200)
              for i in range(4)]
    others = [contact(tenant, first_name=f"O{i}", tags=["newsletter"], created_days_ago=200)
              for i in range(3)]
    for buyer in buyers:
        track(tenant, buyer, "purchase", times=3, days_ago=2)
    track(tenant, others[0], "login", times=2, days_ago=1)
    sale = link(tenant, campaign_id="cmp_sale")
    click(sale, others[1], days_ago=1)
    click(sale, others[2], days_ago=2)
    return {"buyers": buyers, "others": others}


def _suggest(tenant, body=None):
    return tenant.client().post(SUGGEST, body or {}, format="json")


def test_suggestions_come_from_the_signals(tenant, busy_org):
    response = _suggest(tenant, {"limit": 8})
    assert response.status_code == 200, response.content
    data = response.json()["data"]
    names = [s["name"] for s in data["suggestions"]]
    assert 1 <= len(names) <= 8
    assert "Frequent purchase" in names
    assert any(n.startswith("Like recent clickers: newsletter") for n in names)
    for suggestion in data["suggestions"]:
        assert set(suggestion) >= {"name", "description", "rationale", "filters"}
        assert suggestion["matched_count"] > 0
        parse_filters(suggestion["filters"])  # persistable as a saved segment
    frequent = next(s for s in data["suggestions"] if s["name"] == "Frequent purchase")
    assert frequent["filters"]["rules"][0]["field"] == "event.purchase.count"
    assert frequent["matched_count"] == 4
    assert "12 in the last 30 days across 4 contacts" in frequent["rationale"]


def test_empty_suggestions_are_dropped_and_counted(tenant, busy_org):
    data = _suggest(tenant, {"limit": 8}).json()["data"]
    names = [s["name"] for s in data["suggestions"]]
    # nobody is new, untagged or lapsed: those ideas matched nothing
    assert "New contacts" not in names
    assert "No tags yet" not in names
    assert "Lapsed purchase" not in names
    assert data["llm_dropped_count"] >= 3


def test_an_empty_organization_gets_no_suggestions(tenant):
    data = _suggest(tenant).json()["data"]
    assert data["suggestions"] == []
    assert data["llm_dropped_count"] == 3  # the three generic ideas, all empty


def test_limit_defaults_to_5_and_clamps_to_8(tenant, busy_org):
    assert len(_suggest(tenant).json()["data"]["suggestions"]) == 5
    assert len(_suggest(tenant, {"limit": 2}).json()["data"]["suggestions"]) == 2
    assert len(_suggest(tenant, {"limit": 50}).json()["data"]["suggestions"]) <= MAX_LIMIT
    bad = _suggest(tenant, {"limit": 0})
    assert bad.status_code == 422
    assert bad.json()["error"]["details"]["issues"][0]["field"] == "limit"


def test_nothing_is_stored_and_counting_is_one_query(tenant, busy_org):
    with CaptureQueriesContext(connection) as captured:
        assert _suggest(tenant, {"limit": 8}).status_code == 200
    counts = [q for q in captured.captured_queries if "COUNT(" in q["sql"].upper()
              and "contacts_contact" in q["sql"] and "FILTER" in q["sql"].upper()]
    assert len(counts) == 1
    with tenant_context(tenant.org):
        assert not Segment.objects.exists()


def test_a_suggestion_saves_as_a_segment(tenant, busy_org):
    suggestion = next(s for s in _suggest(tenant, {"limit": 8}).json()["data"]["suggestions"]
                      if s["name"] == "Frequent purchase")
    saved = tenant.client().post(SEGMENTS, {"name": suggestion["name"],
                                            "filters": suggestion["filters"]}, format="json")
    assert saved.status_code == 201
    assert member_ids(tenant, saved.json()["data"]["id"]) == {b.pk for b in busy_org["buyers"]}


def test_other_tenants_data_does_not_leak(tenant, other_tenant, busy_org):
    data = _suggest(other_tenant).json()["data"]
    assert data["suggestions"] == []


class _BrokenEngine:
    def candidates(self, organization):
        raise RuntimeError("model unavailable")


def test_engine_failure_is_502(tenant, settings):
    settings.SEGMENTS_SUGGEST_ENGINE = f"{__name__}._BrokenEngine"
    response = _suggest(tenant)
    assert response.status_code == 502
    assert response.json()["error"]["code"] == "AI_SUGGEST_FAILED"


def test_needs_contacts_read(tenant):
    from .helpers import api_key

    response = tenant.client(api_key(tenant, ["files:read"])).post(SUGGEST, {}, format="json")
    assert response.status_code == 403
