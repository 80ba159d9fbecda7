"""Fixtures shared by every test: organizations with credentials and an HTTP client."""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import pytest
from django.core.cache import cache
from rest_framework.test import APIClient

from platform_core.identity import services
from platform_core.identity.models import APIKey, User
from platform_core.tenancy.models import Organization

pytest_plugins = ["tests.cross_tenant"]

_seq = itertools.count(1)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The schema fuzz run is the longest single test (every operation against a live
    server): collected first, a worker starts on it at once instead of ending the run on it
    alone (--dist loadfile hands files out in collection order; the sort is stable)."""
    items.sort(key=lambda item: not item.nodeid.startswith("tests/fuzz/"))


@dataclass
class Tenant:
    """An organization with its owner and a `*` secret key, plus clients acting as them."""

    org: Organization
    owner: User
    password: str
    key: APIKey
    raw_key: str

    def client(self, raw_key: str | None = None) -> APIClient:
        client = APIClient()
        client.credentials(HTTP_X_API_KEY=raw_key or self.raw_key)
        return client

    def session_client(self, user: User | None = None, password: str | None = None) -> APIClient:
        client = APIClient()
        response = client.post(
            "/api/v1/auth/login",
            {
                "email": (user or self.owner).email,
                "password": password or self.password,
                "organization": self.org.slug,
            },
            format="json",
        )
        assert response.status_code == 200, response.content
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {response.json()['data']['token']}")
        client.session_id = response.json()["data"]["session_id"]
        return client


def make_tenant(*, sandbox: bool = True, slug: str | None = None) -> Tenant:
    n = next(_seq)
    slug = slug or f"org-{n}"
    org, owner, password, key, raw = services.organization_create(
        name=f"Org {n}",
        slug=slug,
        owner_email=f"owner-{slug}@example.com",
        owner_password="Correct-Horse-9-battery",
        sandbox=sandbox,
    )
    return Tenant(org=org, owner=owner, password=password, key=key, raw_key=raw)


@pytest.fixture(autouse=True)
def _clean_cache():
    # Only this worker's keys (its own prefix): never FLUSHDB a shared Redis.
    cache.delete_pattern("*")
    return


@pytest.fixture
def tenant(db) -> Tenant:
    return make_tenant()


@pytest.fixture
def other_tenant(db) -> Tenant:
    return make_tenant()


@pytest.fixture
def tenant_factory(db):
    return make_tenant


@pytest.fixture
def anon() -> APIClient:
    return APIClient()
