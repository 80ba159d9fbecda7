"""Scopes (Document 1, section 5 rule 6): a key can do what its scopes name, and no more."""

from __future__ import annotations

import pytest

from .conftest import assert_error, make_key

KEYS = "/api/v1/api-keys"
USERS = "/api/v1/users"


def test_contacts_read_key_cannot_call_other_scopes(tenant):
    client = tenant.client(make_key(tenant, ["contacts:read"]))
    body = assert_error(client.get(KEYS), 403, "INSUFFICIENT_PERMISSIONS")
    assert body["error"]["details"]["required_scope"] == "api_keys:read"
    assert_error(client.get(USERS), 403, "INSUFFICIENT_PERMISSIONS")
    assert_error(
        client.patch("/api/v1/organization", {"name": "x"}, format="json"),
        403,
        "INSUFFICIENT_PERMISSIONS",
    )
    assert_error(
        client.post(KEYS, {"name": "x", "scopes": ["contacts:read"]}, format="json"),
        403,
        "INSUFFICIENT_PERMISSIONS",
    )
    # The organization itself is readable by any credential of the organization.
    assert client.get("/api/v1/organization").status_code == 200


def test_write_implies_read(tenant):
    client = tenant.client(make_key(tenant, ["api_keys:write"]))
    assert client.get(KEYS).status_code == 200
    client = tenant.client(make_key(tenant, ["users:write"]))
    assert client.get(USERS).status_code == 200


def test_read_does_not_imply_write(tenant):
    client = tenant.client(make_key(tenant, ["api_keys:read"]))
    assert client.get(KEYS).status_code == 200
    assert_error(
        client.post(KEYS, {"name": "x", "scopes": ["api_keys:read"]}, format="json"),
        403,
        "INSUFFICIENT_PERMISSIONS",
    )
    assert_error(client.delete(f"{KEYS}/{tenant.key.pk}"), 403, "INSUFFICIENT_PERMISSIONS")


def test_resource_wildcard(tenant):
    client = tenant.client(make_key(tenant, ["api_keys:*"]))
    assert client.get(KEYS).status_code == 200
    response = client.post(KEYS, {"name": "x", "scopes": ["api_keys:read"]}, format="json")
    assert response.status_code == 201, response.content
    assert_error(client.get(USERS), 403, "INSUFFICIENT_PERMISSIONS")


@pytest.mark.parametrize("scope", ["*", "admin"])
def test_full_scopes(tenant, scope):
    client = tenant.client(make_key(tenant, [scope]))
    assert client.get(KEYS).status_code == 200
    assert client.get(USERS).status_code == 200
    assert client.patch("/api/v1/organization", {"name": "y"}, format="json").status_code == 200


def test_public_key_is_read_only_viewer(tenant):
    client = tenant.client(make_key(tenant, ["contacts:read"], key_type="public"))
    assert client.get("/api/v1/organization").status_code == 200
    assert_error(client.get(KEYS), 403, "INSUFFICIENT_PERMISSIONS")
