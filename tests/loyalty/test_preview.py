"""`POST /api/v1/loyalty/preview`: a simulation under the active or an override program."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import time_machine

from platform_core.events.models import TrackedEvent

from .helpers import BASE, Ref, author, scoped_client
from .test_members import EVENTS, RULES

PREVIEW = f"{BASE}/preview"
NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)


def _events(pairs):
    return [{"event_name": name, "properties": props} for name, props in pairs]


@time_machine.travel(NOW, tick=False)
def test_preview_with_the_default_program(tenant):
    response = tenant.client().post(PREVIEW, {"events": _events([
        ("purchase", {"amount": 1200.75}), ("purchase", {"amount": 3}), ("x", {})])},
        format="json")
    assert response.status_code == 200, response.content
    data = response.json()["data"]
    assert data["state"]["balance"]["available"] == 1203
    assert data["state"]["tier"]["current"]["name"] == "Silver"  # default: Silver at 1000
    assert data["events"] == [
        {"index": 0, "event_name": "purchase", "earned": 1200, "credited": 0, "debited": 0},
        {"index": 1, "event_name": "purchase", "earned": 3, "credited": 0, "debited": 0},
        {"index": 2, "event_name": "x", "earned": 0, "credited": 0, "debited": 0},
    ]
    assert data["program"] == {"program_source": "default", "revision_id": "rev_default"}


@time_machine.travel(NOW, tick=False)
def test_preview_uses_the_authored_program_and_matches_the_reference(tenant):
    created = author(tenant, RULES)
    pairs = [*EVENTS, ("loyalty.points_redeemed", {"points": 30}),
             ("loyalty.points_adjusted", {"points": -5}),
             ("loyalty.points_adjusted", {"points": 12})]
    response = tenant.client().post(PREVIEW, {"events": _events(pairs)}, format="json")
    assert response.status_code == 200, response.content
    data = response.json()["data"]
    ref = Ref(RULES)
    for i, (name, props) in enumerate(pairs):
        ref.add(NOW - timedelta(seconds=len(pairs) - i), name, props)
    expected = ref.state(NOW)
    balance = data["state"]["balance"]
    for key in ("available", "lifetime", "earned", "redeemed", "adjusted"):
        assert balance[key] == expected[key], key
    assert data["state"]["tier"]["current"]["name"] == ref.tier(NOW)
    assert data["events"][-3:] == [
        {"index": 11, "event_name": "loyalty.points_redeemed", "earned": 0, "credited": 0,
         "debited": 30},
        {"index": 12, "event_name": "loyalty.points_adjusted", "earned": 0, "credited": 0,
         "debited": 5},
        {"index": 13, "event_name": "loyalty.points_adjusted", "earned": 0, "credited": 12,
         "debited": 0},
    ]
    assert data["program"]["revision_id"] == created["revision_id"]


@time_machine.travel(NOW, tick=False)
def test_preview_with_an_override_and_expiry_writes_nothing(tenant):
    before = TrackedEvent.objects.for_organization(tenant.org).count()
    override = {"name": "Try", "pointsExpiryDays": 10,
                "earnRules": [{"type": "perEvent", "eventName": "visit", "points": 100}],
                "tiers": [{"name": "Base", "threshold": 0}, {"name": "VIP", "threshold": 200}]}
    events = [
        {"event_name": "visit", "occurred_at": (NOW - timedelta(days=20)).isoformat()},
        {"event_name": "visit", "occurred_at": (NOW - timedelta(days=15)).isoformat()},
        {"event_name": "loyalty.points_redeemed", "properties": {"points": 60},
         "occurred_at": (NOW - timedelta(days=14)).isoformat()},
        {"event_name": "visit", "occurred_at": (NOW - timedelta(days=1)).isoformat()},
    ]
    response = tenant.client().post(PREVIEW, {"events": events, "program": override},
                                    format="json")
    assert response.status_code == 200, response.content
    data = response.json()["data"]
    # The redemption consumed 60 of the first lot; 40 and 100 lapsed; 100 left.
    assert data["state"]["balance"]["available"] == 100
    assert data["state"]["balance"]["expired"] == 140
    assert data["state"]["tier"]["current"]["name"] == "VIP"  # lifetime 300
    assert data["program"] == {"program_source": "override", "revision_id": None}
    assert TrackedEvent.objects.for_organization(tenant.org).count() == before
    # The stored program did not change either.
    assert tenant.client().get(f"{BASE}/program").json()["data"]["program_source"] == "default"


def test_preview_of_nothing(tenant):
    response = tenant.client().post(PREVIEW, {"events": []}, format="json")
    assert response.status_code == 200
    data = response.json()["data"]
    assert data["state"]["balance"]["available"] == 0
    assert data["state"]["tier"]["current"]["name"] == "Member"
    assert data["events"] == []


def test_preview_validation(tenant):
    client = tenant.client()
    for body, field in [
        ({}, "events"),
        ({"events": "x"}, "events"),
        ({"events": [{"properties": {}}]}, "events.0.event_name"),
        ({"events": [{"event_name": "a", "properties": [1]}]}, "events.0.properties"),
        ({"events": [{"event_name": "a"}] * 1001}, "events"),
        ({"events": [], "program": {"name": "x", "earnRules": [], "tiers": [
            {"name": "A", "threshold": 5}]}}, "program.tiers"),
    ]:
        response = client.post(PREVIEW, body, format="json")
        assert response.status_code == 422, (body, response.content)
        issues = response.json()["error"]["details"]["issues"]
        assert field in [issue["field"] for issue in issues], issues


def test_preview_needs_contacts_read(tenant):
    assert scoped_client(tenant, ["messages:read"]).post(
        PREVIEW, {"events": []}, format="json").status_code == 403
    assert scoped_client(tenant, ["contacts:read"]).post(
        PREVIEW, {"events": []}, format="json").status_code == 200
