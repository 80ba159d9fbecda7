"""`/api/v1/loyalty/program`: default, create/replace, update, reset, validation, scopes."""

from __future__ import annotations

import pytest

from platform_core.audit.models import AuditLogEntry
from platform_core.events.models import TrackedEvent

from .helpers import PROGRAM, author, make_contact, member, scoped_client, track

CUSTOM = {
    "name": "Coffee club",
    "earnRules": [
        {"id": "visit", "label": "Visit", "type": "perEvent", "eventName": "store.visit",
         "points": 5},
        {"id": "spend", "label": "Spend", "type": "perUnit", "eventName": "order.paid",
         "field": "total", "pointsPerUnit": 2, "rounding": "floor"},
    ],
    "tiers": [
        {"id": "bronze", "name": "Bronze", "threshold": 0, "benefits": ["Free refill"]},
        {"id": "gold", "name": "Gold", "threshold": 100, "benefits": ["Free drink"]},
    ],
    "pointsExpiryDays": 365,
}


def test_default_until_authored(tenant):
    response = tenant.client().get(PROGRAM)
    assert response.status_code == 200
    data = response.json()["data"]
    assert data["program_source"] == "default"
    assert data["id"] == "default"
    assert data["revision_id"] == "rev_default"
    assert data["redemption_event_name"] == "loyalty.points_redeemed"
    assert data["tiers"][0]["threshold"] == 0
    assert set(data["relevant_event_names"]) == {
        "purchase", "loyalty.points_redeemed", "loyalty.points_adjusted"}


def test_create_then_replace(tenant):
    created = author(tenant, CUSTOM)
    assert created["program_source"] == "custom"
    assert created["id"].startswith("lyp_")
    assert created["revision_id"].startswith("rev_")
    assert created["earnRules"][1] == {
        "id": "spend", "label": "Spend", "type": "perUnit", "eventName": "order.paid",
        "field": "total", "pointsPerUnit": 2, "rounding": "floor"}
    assert created["pointsExpiryDays"] == 365
    assert set(created["relevant_event_names"]) == {
        "store.visit", "order.paid", "loyalty.points_redeemed", "loyalty.points_adjusted"}
    assert tenant.client().get(PROGRAM).json()["data"] == created

    replaced = author(tenant, {"name": "Other", "earnRules": [], "tiers": [
        {"name": "Base", "threshold": 0}]})
    assert replaced["id"] == created["id"]
    assert replaced["revision_id"] != created["revision_id"]
    assert replaced["earnRules"] == []
    assert replaced["pointsExpiryDays"] is None  # replace: an omitted field is not kept
    assert replaced["tiers"] == [{"id": "tier_1", "name": "Base", "threshold": 0,
                                  "benefits": []}]


def test_update_merges_given_fields(tenant):
    created = author(tenant, CUSTOM)
    response = tenant.client().put(PROGRAM, {"name": "Renamed", "pointsExpiryDays": None},
                                   format="json")
    assert response.status_code == 200, response.content
    data = response.json()["data"]
    assert data["name"] == "Renamed"
    assert data["pointsExpiryDays"] is None
    assert data["earnRules"] == created["earnRules"]
    assert data["tiers"] == created["tiers"]
    assert data["revision_id"] not in (created["revision_id"], "rev_default")


def test_update_before_authoring_starts_from_default(tenant):
    response = tenant.client().put(PROGRAM, {"pointsExpiryDays": 90}, format="json")
    assert response.status_code == 200
    data = response.json()["data"]
    assert data["program_source"] == "custom"
    assert data["pointsExpiryDays"] == 90
    assert data["earnRules"][0]["eventName"] == "purchase"


def test_reset_keeps_history(tenant):
    contact = make_contact(tenant)
    track(tenant, contact["email"], "store.visit")
    track(tenant, contact["email"], "purchase", {"amount": 42.9})
    created = author(tenant, CUSTOM)
    assert member(tenant, contact["id"])["balance"]["available"] == 5

    response = tenant.client().delete(PROGRAM)
    assert response.status_code == 204
    data = tenant.client().get(PROGRAM).json()["data"]
    assert data["program_source"] == "default"
    assert data["revision_id"] not in (created["revision_id"], "rev_default")
    # The events are all still there; the default program counts the purchase (floor 42.9).
    assert TrackedEvent.objects.for_organization(tenant.org).count() == 2
    assert member(tenant, contact["id"])["balance"]["available"] == 42
    # Resetting again is allowed and makes another revision.
    assert tenant.client().delete(PROGRAM).status_code == 204
    assert tenant.client().get(PROGRAM).json()["data"]["revision_id"] != data["revision_id"]


def test_program_changes_are_audited(tenant):
    author(tenant, CUSTOM)
    tenant.client().put(PROGRAM, {"name": "x"}, format="json")
    tenant.client().delete(PROGRAM)
    actions = list(AuditLogEntry.objects.filter(organization=tenant.org,
                                                action__startswith="loyalty.program")
                   .order_by("created_at").values_list("action", flat=True))
    assert actions == ["loyalty.program.replaced", "loyalty.program.updated",
                       "loyalty.program.reset"]


def _rule(**extra):
    return {"type": "perEvent", "eventName": "e", "points": 1, **extra}


@pytest.mark.parametrize(("change", "field"), [
    ({"tiers": [{"name": "A", "threshold": 10}]}, "tiers"),
    ({"tiers": []}, "tiers"),
    ({"tiers": [{"name": "A", "threshold": 0}, {"name": "B", "threshold": 0}]}, "tiers"),
    ({"tiers": [{"name": "A", "threshold": -1}]}, "tiers.0.threshold"),
    ({"earnRules": [{"type": "perEvent", "eventName": "e"}]}, "earnRules.0.points"),
    ({"earnRules": [{"type": "perUnit", "eventName": "e", "pointsPerUnit": 1}]},
     "earnRules.0.field"),
    ({"earnRules": [{"type": "perUnit", "eventName": "e", "field": "f", "pointsPerUnit": 1,
                     "rounding": "bankers"}]}, "earnRules.0.rounding"),
    ({"earnRules": [{"type": "perUnit", "eventName": "e", "field": "f",
                     "pointsPerUnit": 0}]}, "earnRules.0.pointsPerUnit"),
    ({"earnRules": [{"type": "perMonth", "eventName": "e", "points": 1}]}, "earnRules.0.type"),
    ({"earnRules": [_rule(eventName="loyalty.points_redeemed")]}, "earnRules.0.eventName"),
    ({"earnRules": [_rule(id="a"), _rule(id="a")]}, "earnRules"),
    ({"pointsExpiryDays": 0}, "pointsExpiryDays"),
    ({"pointsExpiryDays": "soon"}, "pointsExpiryDays"),
    ({"name": ""}, "name"),
])
def test_invalid_program_is_422(tenant, change, field):
    body = {**CUSTOM, **change}
    for method in ("post", "put"):
        response = getattr(tenant.client(), method)(PROGRAM, body, format="json")
        assert response.status_code == 422, (method, response.content)
        error = response.json()["error"]
        assert error["code"] == "VALIDATION_ERROR"
        assert field in [issue["field"] for issue in error["details"]["issues"]], error
    assert tenant.client().get(PROGRAM).json()["data"]["program_source"] == "default"


def test_non_object_bodies_are_422(tenant):
    for method in ("post", "put"):
        response = getattr(tenant.client(), method)(PROGRAM, [1, 2], format="json")
        assert response.status_code == 422, response.content


def test_scopes(tenant):
    reader = scoped_client(tenant, ["contacts:read"])
    assert reader.get(PROGRAM).status_code == 200
    for method in ("post", "put", "delete"):
        response = getattr(reader, method)(PROGRAM, CUSTOM, format="json")
        assert response.status_code == 403
        assert response.json()["error"]["details"]["required_scope"] == "contacts:write"
    outsider = scoped_client(tenant, ["messages:read"])
    response = outsider.get(PROGRAM)
    assert response.status_code == 403
    assert response.json()["error"]["details"]["required_scope"] == "contacts:read"
    writer = scoped_client(tenant, ["contacts:write"])
    assert writer.post(PROGRAM, CUSTOM, format="json").status_code == 201


def test_programs_are_per_organization(tenant, other_tenant):
    author(tenant, CUSTOM)
    assert other_tenant.client().get(PROGRAM).json()["data"]["program_source"] == "default"
    other_tenant.client().delete(PROGRAM)
    assert tenant.client().get(PROGRAM).json()["data"]["name"] == "Coffee club"
