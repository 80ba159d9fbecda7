"""Helpers for the identity tests: members with a role and keys with chosen scopes."""

from __future__ import annotations

import itertools

import pytest
from rest_framework.test import APIClient

from platform_core.identity import services
from platform_core.identity.models import KeyMode, KeyType, User
from platform_core.identity.principal import Principal
from platform_core.tenancy.context import tenant_context

PASSWORD = "Another-Horse-7-staple"
_seq = itertools.count(1)


def add_member(tenant, role: str, *, email: str | None = None, password: str = PASSWORD) -> User:
    """Add a user with `role` to the tenant's organization (acting as its owner)."""
    email = email or f"{role}-{next(_seq)}-{tenant.org.slug}@example.com"
    owner = Principal(
        kind="session", organization=tenant.org, role="owner", user_id=tenant.owner.pk
    )
    with tenant_context(tenant.org):
        membership = services.user_invite(
            principal=owner, email=email, name=role.title(), role=role, password=password
        )
    return membership.user


def make_key(
    tenant,
    scopes: list[str],
    *,
    key_type: str = KeyType.SECRET,
    mode: str | None = None,
    allowed_ips: list[str] | None = None,
) -> str:
    _key, raw = services.api_key_create(
        organization=tenant.org,
        name="test key",
        key_type=key_type,
        mode=mode or (KeyMode.TEST if tenant.org.sandbox else KeyMode.LIVE),
        scopes=scopes,
        allowed_ips=allowed_ips,
    )
    return raw


def login(email: str, password: str = PASSWORD, organization: str | None = None, **extra):
    body = {"email": email, "password": password}
    if organization is not None:
        body["organization"] = organization
    return APIClient().post("/api/v1/auth/login", body, format="json", **extra)


def bearer(token: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    return client


def session_for(tenant, user: User, password: str = PASSWORD) -> APIClient:
    return tenant.session_client(user, password)


def assert_error(response, status: int, code: str) -> dict:
    assert response.status_code == status, response.content
    body = response.json()
    assert body["error"]["code"] == code, body
    assert body["error"]["status"] == status
    meta = body["meta"]
    assert meta["request_id"]
    assert meta["timestamp"]
    assert meta["docs_url"].endswith(f"/errors/{code}")
    return body


@pytest.fixture
def live_tenant(tenant_factory):
    return tenant_factory(sandbox=False)
