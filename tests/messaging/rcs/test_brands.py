"""Brands: CRUD, submit for carrier verification and its lifecycle (test mode)."""

from __future__ import annotations

import pytest

from platform_core.identity import services as identity_services
from platform_core.identity.models import KeyMode, KeyType

from .conftest import error, events, ok

pytestmark = pytest.mark.django_db


def test_create_list_read_update_delete(api, brand):
    created = brand("Acme Coffee")
    assert created["status"] == "draft"
    assert created["id"].startswith("rbr_")
    listed = ok(api("GET", "/brands"))
    assert [b["id"] for b in listed] == [created["id"]]
    assert ok(api("GET", f"/brands/{created['id']}"))["name"] == "Acme Coffee"
    patched = ok(api("PATCH", f"/brands/{created['id']}", {"contact_name": "Bob"}))
    assert (patched["contact_name"], patched["name"]) == ("Bob", "Acme Coffee")
    assert api("DELETE", f"/brands/{created['id']}").status_code == 204
    error(api("GET", f"/brands/{created['id']}"), 404, "NOT_FOUND")


@pytest.mark.parametrize(("body", "field"), [
    ({}, "name"),
    ({"name": ""}, "name"),
    ({"name": "x" * 101}, "name"),
    ({"name": "A", "website": "http://insecure.example"}, "website"),
    ({"name": "A", "contact_email": "nope"}, "contact_email"),
])
def test_create_validation(api, body, field):
    err = error(api("POST", "/brands", body), 422, "VALIDATION_ERROR")
    assert field in str(err["details"])


def test_submit_is_verified_by_the_double(api, brand, tenant):
    created = brand()
    submitted = ok(api("POST", f"/brands/{created['id']}/submit"))
    assert submitted["status"] == "submitted"  # the answer; the verdict follows the commit
    assert submitted["submitted_at"]
    after = ok(api("GET", f"/brands/{created['id']}"))
    assert after["status"] == "verified"
    assert after["verified_at"]
    assert [e.type for e in events(tenant, "rcs.brand")] == [
        "rcs.brand.created", "rcs.brand.submitted", "rcs.brand.verified"]


def test_rejected_brand_can_be_fixed_and_resubmitted(api, brand, tenant):
    created = brand("Reject Me Inc")
    ok(api("POST", f"/brands/{created['id']}/submit"))
    rejected = ok(api("GET", f"/brands/{created['id']}"))
    assert rejected["status"] == "rejected"
    assert "reject" in rejected["rejection_reason"]
    rejected_event = events(tenant, "rcs.brand.rejected")[0]
    assert rejected_event.data["brand_id"] == created["id"]
    ok(api("PATCH", f"/brands/{created['id']}", {"name": "Acme Fixed"}))
    ok(api("POST", f"/brands/{created['id']}/submit"))
    assert ok(api("GET", f"/brands/{created['id']}"))["status"] == "verified"


def test_submit_twice_and_rename_of_verified(api, brand):
    created = brand()
    ok(api("POST", f"/brands/{created['id']}/submit"))
    error(api("POST", f"/brands/{created['id']}/submit"), 409, "RCS_BRAND_NOT_SUBMITTABLE")
    renamed = ok(api("PATCH", f"/brands/{created['id']}", {"name": "New Name"}))
    assert renamed["status"] == "draft"  # a new name needs verifying again


def test_brand_with_agents_cannot_be_deleted(api, agent):
    bot = agent()
    error(api("DELETE", f"/brands/{bot['brand_id']}"), 409, "RCS_BRAND_IN_USE")
    assert api("DELETE", f"/bots/{bot['id']}").status_code == 204
    assert api("DELETE", f"/brands/{bot['brand_id']}").status_code == 204


def test_list_is_paginated_without_n_plus_one(api, brand, django_assert_max_num_queries):
    for i in range(3):
        brand(f"Brand {i}")
    first = api("GET", "/brands?limit=2")
    assert len(first.json()["data"]) == 2
    cursor = first.json()["meta"]["pagination"]["cursor"]
    assert len(ok(api("GET", f"/brands?limit=2&cursor={cursor}"))) == 1
    for i in range(3, 8):
        brand(f"Brand {i}")
    with django_assert_max_num_queries(12):
        assert len(ok(api("GET", "/brands?limit=100"))) == 8


def test_read_scope_cannot_write(tenant, api, brand):
    brand()
    _key, raw = identity_services.api_key_create(
        organization=tenant.org, name="ro", key_type=KeyType.SECRET, mode=KeyMode.TEST,
        scopes=["rcs:read"])
    client = tenant.client(raw)
    assert len(ok(api("GET", "/brands", client=client))) == 1
    error(api("POST", "/brands", {"name": "X"}, client=client), 403, "INSUFFICIENT_PERMISSIONS")
