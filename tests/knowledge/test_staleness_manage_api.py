"""Staleness per Document 3, 4.3 at the edges (time-machine), computed in one statement,
and the organization's scorecard `/ai/kb/staleness` with `limit` 1-1000."""

from __future__ import annotations

import datetime as dt

import pytest
import time_machine

from knowledge import staleness
from knowledge.models import Document
from platform_core.tenancy.context import tenant_context

from .helpers import ANSWERS, KB, add_markdown, create_kb

pytestmark = pytest.mark.django_db
T0 = dt.datetime(2026, 1, 1, 12, tzinfo=dt.UTC)
DAY = dt.timedelta(days=1)
SECOND = dt.timedelta(seconds=1)
AI_STALENESS = "/api/v1/ai/kb/staleness"
TEXT = "# Warranty\n\nEvery blender carries a two-year warranty on the motor."


def _docs(tenant, capture, names: list[str], kb: str | None = None, **extra):
    client = tenant.client()
    kb = kb or create_kb(client)
    with time_machine.travel(T0, tick=False):
        ids = {name: add_markdown(client, kb, name, TEXT, capture, **extra)["id"]
               for name in names}
    return client, kb, ids


def _stamp(tenant, doc_id: str, **fields) -> None:
    with tenant_context(tenant.org):
        Document.objects.filter(pk=doc_id).update(**fields)


def test_bucket_edges(tenant, django_capture_on_commit_callbacks):
    """With a 10-day threshold: below 10 days fresh, at exactly 10 stale, just below 20
    stale, at exactly 20 critical. Ages count from last_verified_at when set."""
    client, kb, ids = _docs(tenant, django_capture_on_commit_callbacks,
                            ["fresh", "stale-edge", "stale-high", "critical-edge"])
    now = T0 + dt.timedelta(days=100)
    _stamp(tenant, ids["fresh"], last_verified_at=now - 10 * DAY + SECOND)
    _stamp(tenant, ids["stale-edge"], last_verified_at=now - 10 * DAY)
    _stamp(tenant, ids["stale-high"], last_verified_at=now - 20 * DAY + SECOND)
    _stamp(tenant, ids["critical-edge"], last_verified_at=now - 20 * DAY)
    with time_machine.travel(now, tick=False):
        card = client.get(f"{KB}/{kb}/staleness", {"default_threshold_days": 10}).json()["data"]
    assert card["totals"] == {"fresh": 1, "stale": 2, "critical": 1, "documents_scanned": 4,
                              "never_verified": 0}
    assert [(i["id"], i["bucket"], i["age_days"], i["threshold_days"])
            for i in card["attention_required"]] == [
        (ids["critical-edge"], "critical", 20, 10), (ids["stale-high"], "stale", 19, 10),
        (ids["stale-edge"], "stale", 10, 10)]
    assert card["scanned_at"].startswith("2026-04-11T12:00:00")


def test_updated_at_when_never_verified_and_own_threshold(tenant,
                                                          django_capture_on_commit_callbacks):
    client, kb, ids = _docs(tenant, django_capture_on_commit_callbacks, ["plain"])
    with time_machine.travel(T0, tick=False):
        own = add_markdown(client, kb, "own", TEXT, django_capture_on_commit_callbacks,
                           staleness_threshold_days=5)["id"]
    with time_machine.travel(T0 + 6 * DAY, tick=False):
        card = client.get(f"{KB}/{kb}/staleness").json()["data"]
    assert card["default_threshold_days"] == 90
    assert card["totals"]["never_verified"] == 2
    assert [(i["id"], i["bucket"], i["threshold_days"], i["last_verified_at"])
            for i in card["attention_required"]] == [(own, "stale", 5, None)]
    item = card["attention_required"][0]
    assert set(item) == {"id", "name", "type", "status", "bucket", "age_days",
                         "threshold_days", "last_verified_at", "last_cited_at", "updated_at"}
    assert item["updated_at"].startswith("2026-01-01T12:00:00")


def test_verifying_resets_the_age_and_citing_stamps(tenant,
                                                    django_capture_on_commit_callbacks):
    client, kb, ids = _docs(tenant, django_capture_on_commit_callbacks, ["warranty"])
    with time_machine.travel(T0 + 100 * DAY, tick=False):
        answer = client.post(ANSWERS, {"question": "How long is the blender warranty?"},
                             format="json")
        assert answer.status_code == 200, answer.content
        assert answer.json()["data"]["answered"] is True
        card = client.get(AI_STALENESS).json()["data"]
    item = card["attention_required"][0]
    assert (item["id"], item["bucket"], item["age_days"]) == (ids["warranty"], "stale", 100)
    assert item["last_cited_at"].startswith("2026-04-11T12:00:00")
    _stamp(tenant, ids["warranty"], last_verified_at=T0 + 99 * DAY)
    with time_machine.travel(T0 + 100 * DAY, tick=False):
        card = client.get(AI_STALENESS).json()["data"]
    assert card["totals"] == {"fresh": 1, "stale": 0, "critical": 0, "documents_scanned": 1,
                              "never_verified": 0}
    assert card["attention_required"] == []


def test_org_scorecard_spans_bases_oldest_first_with_limit(tenant,
                                                           django_capture_on_commit_callbacks):
    capture = django_capture_on_commit_callbacks
    client, kb_a, a = _docs(tenant, capture, ["a1", "a2"])
    _, kb_b, b = _docs(tenant, capture, ["b1"])
    for n, doc_id in enumerate([a["a1"], b["b1"], a["a2"]]):  # a1 oldest, a2 newest
        _stamp(tenant, doc_id, last_verified_at=T0 + n * DAY)
    with time_machine.travel(T0 + 400 * DAY, tick=False):
        card = client.get(AI_STALENESS).json()["data"]
        limited = client.get(AI_STALENESS, {"limit": 2}).json()["data"]
    assert card["knowledge_base_id"] is None
    assert [i["id"] for i in card["attention_required"]] == [a["a1"], b["b1"], a["a2"]]
    assert [i["id"] for i in limited["attention_required"]] == [a["a1"], b["b1"]]
    assert limited["totals"]["critical"] == 3  # totals count every document, not the page
    per_base = client.get(f"{KB}/{kb_b}/staleness").json()["data"]
    assert per_base["knowledge_base_id"] == kb_b
    assert per_base["totals"]["documents_scanned"] == 1


def test_limit_default_and_bounds(tenant, django_capture_on_commit_callbacks):
    client, _, _ = _docs(tenant, django_capture_on_commit_callbacks,
                         [f"d{n}" for n in range(27)])
    with time_machine.travel(T0 + 400 * DAY, tick=False):
        card = client.get(AI_STALENESS).json()["data"]
        assert len(card["attention_required"]) == 25
        assert card["totals"]["critical"] == 27
        assert len(client.get(AI_STALENESS, {"limit": 1000}).json()["data"][
            "attention_required"]) == 27
        for query in ({"limit": 0}, {"limit": 1001}, {"limit": "x"},
                      {"default_threshold_days": 0}, {"default_threshold_days": 3651}):
            response = client.get(AI_STALENESS, query)
            assert response.status_code == 422, query
            assert response.json()["error"]["code"] == "VALIDATION_ERROR"


def test_another_organizations_documents_never_count(tenant, other_tenant,
                                                     django_capture_on_commit_callbacks):
    _docs(other_tenant, django_capture_on_commit_callbacks, ["secret"])
    with time_machine.travel(T0 + 400 * DAY, tick=False):
        card = tenant.client().get(AI_STALENESS).json()["data"]
    assert card["totals"]["documents_scanned"] == 0
    assert card["attention_required"] == []


def test_one_statement(tenant, django_capture_on_commit_callbacks,
                       django_assert_num_queries):
    _, _, _ = _docs(tenant, django_capture_on_commit_callbacks, ["x", "y", "z"])
    with tenant_context(tenant.org), time_machine.travel(T0 + 200 * DAY, tick=False), \
            django_assert_num_queries(1):
        card = staleness.scorecard(limit=2)
    assert card["totals"]["critical"] == 3
    assert len(card["attention_required"]) == 2
