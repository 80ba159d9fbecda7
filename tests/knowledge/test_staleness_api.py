"""The staleness scorecard (Document 3, 2.2 and 4.3), with time-machine."""

from __future__ import annotations

import datetime as dt

import pytest
import time_machine

from knowledge.models import Document
from platform_core.tenancy.context import tenant_context

from .helpers import KB, add_markdown, create_kb

pytestmark = pytest.mark.django_db
T0 = dt.datetime(2026, 1, 1, 12, tzinfo=dt.UTC)
TEXT = "# Hours\n\nWe open at nine."


def test_buckets_thresholds_and_order(tenant, django_capture_on_commit_callbacks):
    client = tenant.client()
    capture = django_capture_on_commit_callbacks
    with time_machine.travel(T0, tick=False):
        kb = create_kb(client)
        old = add_markdown(client, kb, "old", TEXT, capture)
        mid = add_markdown(client, kb, "mid", TEXT, capture)
        own = add_markdown(client, kb, "own", TEXT, capture, staleness_threshold_days=500)
    with time_machine.travel(T0 + dt.timedelta(days=150), tick=False):
        fresh = add_markdown(client, kb, "fresh", TEXT, capture)
    with tenant_context(tenant.org):  # verified 50 days after creation: age counts from it
        Document.objects.filter(pk=mid["id"]).update(
            last_verified_at=T0 + dt.timedelta(days=50))
    with time_machine.travel(T0 + dt.timedelta(days=190), tick=False):
        response = client.get(f"{KB}/{kb}/staleness")
    assert response.status_code == 200, response.content
    card = response.json()["data"]
    assert card["default_threshold_days"] == 90
    assert card["totals"] == {"fresh": 2, "stale": 1, "critical": 1,
                              "documents_scanned": 4, "never_verified": 3}
    items = card["attention_required"]
    assert [(i["id"], i["bucket"], i["age_days"]) for i in items] == [
        (old["id"], "critical", 190), (mid["id"], "stale", 140)]
    assert items[0]["threshold_days"] == 90
    assert fresh["id"] not in {i["id"] for i in items}
    assert own["id"] not in {i["id"] for i in items}  # its own 500-day threshold wins


def test_threshold_query_bounds(tenant):
    client = tenant.client()
    kb = create_kb(client)
    for value in ("0", "3651", "x"):
        response = client.get(f"{KB}/{kb}/staleness", {"default_threshold_days": value})
        assert response.status_code == 422, value
    ok = client.get(f"{KB}/{kb}/staleness", {"default_threshold_days": 3650})
    assert ok.json()["data"]["totals"]["documents_scanned"] == 0
    assert client.get(f"{KB}/kb_nope/staleness").status_code == 404
