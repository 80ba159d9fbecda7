"""API keys (Document 1, 2.7 and section 5 rule 4; 0-conventions.md section 2)."""

from __future__ import annotations

import hashlib

import pytest
from django.db import connection

from platform_core.identity.models import APIKey
from platform_core.tenancy.context import tenant_context

from .conftest import add_member, assert_error, make_key, session_for

URL = "/api/v1/api-keys"


def create(client, **body):
    body.setdefault("name", "k")
    body.setdefault("scopes", ["contacts:read"])
    return client.post(URL, body, format="json")


@pytest.mark.parametrize(
    ("key_type", "mode", "prefix"),
    [
        ("secret", "test", "svc_test_sk_"),
        ("secret", "live", "svc_live_sk_"),
        ("public", "test", "svc_test_pk_"),
        ("public", "live", "svc_live_pk_"),
    ],
)
def test_create_returns_full_key_once_with_prefix(tenant, key_type, mode, prefix):
    response = create(tenant.client(), type=key_type, mode=mode, scopes=["contacts:read"])
    assert response.status_code == 201, response.content
    data = response.json()["data"]
    assert data["key"].startswith(prefix)
    assert len(data["key"]) > len(prefix) + 30
    assert data["id"].startswith("key_")
    assert (data["type"], data["mode"], data["status"]) == (key_type, mode, "active")
    assert data["key"].startswith(data["prefix"])
    assert data["key"].endswith(data["last4"])
    assert "key_hash" not in data

    listed = tenant.client().get(URL).json()["data"]
    detail = tenant.client().get(f"{URL}/{data['id']}").json()["data"]
    for item in (next(i for i in listed if i["id"] == data["id"]), detail):
        assert "key" not in item
        assert "key_hash" not in item
        assert item["prefix"] == data["prefix"]
        assert item["last4"] == data["last4"]
        assert data["key"] not in str(item)
        assert hashlib.sha256(data["key"].encode()).hexdigest() not in str(item)


def test_mode_defaults_to_organization(tenant, live_tenant):
    assert create(tenant.client()).json()["data"]["key"].startswith("svc_test_sk_")
    assert create(live_tenant.client()).json()["data"]["key"].startswith("svc_live_sk_")


def test_database_holds_only_sha256(tenant):
    raw = create(tenant.client(), scopes=["*"]).json()["data"]["key"]
    with tenant_context(tenant.org):
        key = APIKey.objects.get(key_hash=hashlib.sha256(raw.encode()).hexdigest())
    assert key.key_hash == hashlib.sha256(raw.encode()).hexdigest()
    # The clear key is nowhere in any column of any table row we can reach cheaply.
    for field in key._meta.concrete_fields:
        assert raw not in str(getattr(key, field.attname))
    from platform_core.audit.models import AuditLogEntry

    with connection.cursor() as cursor:
        cursor.execute(f"SELECT row_to_json(t)::text FROM {APIKey._meta.db_table} t")  # noqa: S608
        rows = [row[0] for row in cursor.fetchall()]
        cursor.execute(f"SELECT row_to_json(t)::text FROM {AuditLogEntry._meta.db_table} t")  # noqa: S608
        rows += [row[0] for row in cursor.fetchall()]
    assert rows
    assert all(raw not in row for row in rows)


def test_created_key_works_and_last_used_is_set(tenant):
    data = create(tenant.client(), scopes=["*"]).json()["data"]
    assert data["last_used_at"] is None
    assert tenant.client(data["key"]).get("/api/v1/organization").status_code == 200
    detail = tenant.client().get(f"{URL}/{data['id']}").json()["data"]
    assert detail["last_used_at"] is not None


@pytest.mark.parametrize(
    "scope", ["messages:write", "contacts:write", "admin", "*", "billing:read", "settings:read"]
)
def test_public_key_refuses_forbidden_scopes(tenant, scope):
    response = create(tenant.client(), type="public", scopes=["contacts:read", scope])
    body = assert_error(response, 422, "VALIDATION_ERROR")
    assert body["error"]["details"]["issues"][0]["field"] == "scopes"
    assert APIKey.objects.for_organization(tenant.org).filter(type="public").count() == 0


def test_public_key_with_read_scopes(tenant):
    response = create(tenant.client(), type="public", scopes=["contacts:read", "templates:read"])
    assert response.status_code == 201


@pytest.mark.parametrize("scopes", [[], ["nonsense"], ["contacts:destroy"], "contacts:read"])
def test_invalid_scopes_are_422(tenant, scopes):
    assert_error(create(tenant.client(), scopes=scopes), 422, "VALIDATION_ERROR")


def test_unknown_type_or_mode_is_422(tenant):
    assert_error(create(tenant.client(), type="private"), 422, "VALIDATION_ERROR")
    assert_error(create(tenant.client(), mode="prod"), 422, "VALIDATION_ERROR")


def test_delete_revokes_at_once(tenant):
    data = create(tenant.client(), scopes=["*"]).json()["data"]
    victim = tenant.client(data["key"])
    assert victim.get("/api/v1/organization").status_code == 200  # cached snapshot
    response = tenant.client().delete(f"{URL}/{data['id']}")
    assert response.status_code == 204
    assert response.content == b""
    assert_error(victim.get("/api/v1/organization"), 401, "INVALID_API_KEY")
    detail = tenant.client().get(f"{URL}/{data['id']}").json()["data"]
    assert detail["status"] == "revoked"
    assert detail["revoked_at"] is not None


def test_delete_unknown_is_404(tenant):
    assert_error(tenant.client().delete(f"{URL}/key_doesnotexist"), 404, "NOT_FOUND")


def test_a_key_may_revoke_itself(tenant):
    data = create(tenant.client(), scopes=["*"]).json()["data"]
    own = tenant.client(data["key"])
    assert own.delete(f"{URL}/{data['id']}").status_code == 204
    assert_error(own.get(URL), 401, "INVALID_API_KEY")


class TestWhoMayManageKeys:
    def test_developer_session_may(self, tenant):
        client = session_for(tenant, add_member(tenant, "developer"))
        assert client.get(URL).status_code == 200
        assert create(client, scopes=["contacts:write"]).status_code == 201

    @pytest.mark.parametrize("role", ["viewer", "agent"])
    def test_lower_roles_may_not(self, tenant, role):
        client = session_for(tenant, add_member(tenant, role))
        assert_error(client.get(URL), 403, "INSUFFICIENT_PERMISSIONS")
        assert_error(create(client), 403, "INSUFFICIENT_PERMISSIONS")
        assert_error(client.delete(f"{URL}/{tenant.key.pk}"), 403, "INSUFFICIENT_PERMISSIONS")

    def test_developer_cannot_mint_an_admin_key(self, tenant):
        client = session_for(tenant, add_member(tenant, "developer"))
        for scopes in (["*"], ["admin"], ["users:write"], ["settings:write"]):
            assert_error(create(client, scopes=scopes), 403, "INSUFFICIENT_PERMISSIONS")

    def test_admin_may_mint_a_wildcard_key(self, tenant):
        client = session_for(tenant, add_member(tenant, "admin"))
        assert create(client, scopes=["*"]).status_code == 201

    def test_key_cannot_mint_broader_key(self, tenant):
        raw = make_key(tenant, ["api_keys:write", "contacts:read"])
        client = tenant.client(raw)
        assert create(client, scopes=["contacts:read"]).status_code == 201
        assert create(client, scopes=["api_keys:read"]).status_code == 201
        assert_error(create(client, scopes=["contacts:write"]), 403, "INSUFFICIENT_PERMISSIONS")
        assert_error(create(client, scopes=["*"]), 403, "INSUFFICIENT_PERMISSIONS")
        assert_error(create(client, scopes=["contacts:*"]), 403, "INSUFFICIENT_PERMISSIONS")


def test_list_query_count_is_constant(tenant, django_assert_max_num_queries):
    from django.test.utils import CaptureQueriesContext

    client = tenant.client()
    client.get(URL)  # warm the authentication cache

    def measure() -> int:
        with CaptureQueriesContext(connection) as ctx:
            response = client.get(URL)
        assert response.status_code == 200
        return len(ctx.captured_queries)

    few = measure()
    for _n in range(15):
        make_key(tenant, ["contacts:read"])
    many = measure()
    assert few == many, (few, many)
    with django_assert_max_num_queries(4):
        client.get(URL)
