"""`POST /api/v1/events/track` (Document 1, 4.6, 6.3 and 8)."""

from __future__ import annotations

import json

import pytest

from platform_core.events.models import TrackedEvent
from platform_core.identity import services
from platform_core.identity.models import KeyType

LIMIT = 1_048_576


def _stored(tenant):
    return TrackedEvent.objects.for_organization(tenant.org)


def _properties_of_size(size: int) -> dict:
    # {"blob":"<x * n>"} serializes to n + 11 bytes of compact JSON.
    body = {"blob": "x" * (size - 11)}
    assert len(json.dumps(body, separators=(",", ":"))) == size
    return body


def test_track_stores_the_event(tenant):
    response = tenant.client().post("/api/v1/events/track", {
        "event": "order.completed",
        "contact_email": "  Ada@Example.COM ",
        "properties": {"total": 42.5, "items": [1, 2]},
    }, format="json")
    assert response.status_code == 201, response.content
    data = response.json()["data"]
    assert data["id"].startswith("tev_")
    assert data["event"] == "order.completed"
    assert data["contact_email"] == "ada@example.com"
    assert data["contact_phone"] is None
    assert data["contact_id"] is None
    record = _stored(tenant).get(pk=data["id"])
    assert record.name == "order.completed"
    assert record.properties == {"total": 42.5, "items": [1, 2]}
    assert record.contact_email == "ada@example.com"
    assert record.occurred_at is not None


def test_track_without_contact_is_stored_unlinked(tenant):
    response = tenant.client().post("/api/v1/events/track", {"event": "app.opened"},
                                    format="json")
    assert response.status_code == 201
    record = _stored(tenant).get(pk=response.json()["data"]["id"])
    assert (record.contact_email, record.contact_phone, record.contact_id) == ("", "", None)
    assert record.properties == {}


def test_phone_is_normalized_to_e164_with_the_default_country(tenant):
    api = tenant.client()
    us = api.post("/api/v1/events/track", {"event": "a", "contact_phone": "(415) 555-2671"},
                  format="json")
    assert us.json()["data"]["contact_phone"] == "+14155552671"
    patched = api.patch("/api/v1/organization", {"default_country": "GB"}, format="json")
    assert patched.status_code == 200
    gb = api.post("/api/v1/events/track", {"event": "a", "contact_phone": "020 7946 0018"},
                  format="json")
    assert gb.status_code == 201, gb.content
    assert gb.json()["data"]["contact_phone"] == "+442079460018"
    e164 = api.post("/api/v1/events/track", {"event": "a", "contact_phone": "+14155552671"},
                    format="json")
    assert e164.json()["data"]["contact_phone"] == "+14155552671"


@pytest.mark.parametrize(("body", "field"), [
    ({}, "event"),
    ({"event": ""}, "event"),
    ({"event": "   "}, "event"),
    ({"event": 5, "properties": []}, "properties"),
    ({"event": "a", "properties": "text"}, "properties"),
    ({"event": "a", "contact_email": "not-an-email"}, "contact_email"),
    ({"event": "a", "contact_phone": "12"}, "contact_phone"),
    ({"event": "a", "contact_phone": "call me"}, "contact_phone"),
    ({"event": "a", "occurred_at": "2999-01-01T00:00:00Z"}, "occurred_at"),
    ({"event": "x" * 201}, "event"),
])
def test_invalid_bodies_are_refused(tenant, body, field):
    response = tenant.client().post("/api/v1/events/track", body, format="json")
    assert response.status_code == 422, response.content
    error = response.json()["error"]
    assert error["code"] == "VALIDATION_ERROR"
    assert field in [issue["field"] for issue in error["details"]["issues"]]
    assert not _stored(tenant).exists()


def test_properties_up_to_one_mebibyte_are_accepted(tenant):
    response = tenant.client().post(
        "/api/v1/events/track", {"event": "big", "properties": _properties_of_size(LIMIT)},
        format="json")
    assert response.status_code == 201
    assert _stored(tenant).count() == 1


def test_properties_above_one_mebibyte_answer_413_and_store_nothing(tenant):
    response = tenant.client().post(
        "/api/v1/events/track", {"event": "big", "properties": _properties_of_size(LIMIT + 1)},
        format="json")
    assert response.status_code == 413
    error = response.json()["error"]
    assert error["code"] == "EVENT_PAYLOAD_TOO_LARGE"
    assert error["status"] == 413
    assert not _stored(tenant).exists()


@pytest.mark.parametrize("idempotency_key", [None, "big-body-1"])
def test_huge_bodies_answer_413_event_payload_too_large(tenant, idempotency_key):
    headers = {"HTTP_IDEMPOTENCY_KEY": idempotency_key} if idempotency_key else {}
    response = tenant.client().post(
        "/api/v1/events/track",
        json.dumps({"event": "big", "properties": {"blob": "x" * (3 * LIMIT)}}),
        content_type="application/json", **headers)
    assert response.status_code == 413
    assert response.json()["error"]["code"] == "EVENT_PAYLOAD_TOO_LARGE"
    assert not _stored(tenant).exists()


def test_scope_events_write(tenant):
    _, raw = services.api_key_create(organization=tenant.org, name="r", key_type=KeyType.SECRET,
                                     mode=None, scopes=["events:read"])
    refused = tenant.client(raw).post("/api/v1/events/track", {"event": "a"}, format="json")
    assert refused.status_code == 403
    assert refused.json()["error"]["code"] == "INSUFFICIENT_PERMISSIONS"
    _, raw = services.api_key_create(organization=tenant.org, name="w", key_type=KeyType.SECRET,
                                     mode=None, scopes=["events:write"])
    allowed = tenant.client(raw).post("/api/v1/events/track", {"event": "a"}, format="json")
    assert allowed.status_code == 201


def test_idempotency_key_replays_the_first_answer(tenant):
    api = tenant.client()
    first = api.post("/api/v1/events/track", {"event": "a"}, format="json",
                     HTTP_IDEMPOTENCY_KEY="track-1")
    again = api.post("/api/v1/events/track", {"event": "a"}, format="json",
                     HTTP_IDEMPOTENCY_KEY="track-1")
    assert again.json()["data"]["id"] == first.json()["data"]["id"]
    assert _stored(tenant).count() == 1


def test_get_is_not_allowed(tenant):
    assert tenant.client().get("/api/v1/events/track").status_code == 405


def test_tracked_events_are_per_tenant(tenant, other_tenant):
    tenant.client().post("/api/v1/events/track", {"event": "a"}, format="json")
    assert not _stored(other_tenant).exists()
    assert _stored(tenant).count() == 1
