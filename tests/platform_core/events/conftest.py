"""Fixtures of the events tests: emitting through the bus, the feed's Redis, roles."""

from __future__ import annotations

import socket

import pytest
from django.conf import settings
from django.db import transaction

from platform_core.events.bus import emit
from platform_core.events.feed import _client, get_feed
from platform_core.identity import services
from platform_core.identity.principal import Principal
from platform_core.tenancy.context import tenant_context


@pytest.fixture(autouse=True)
def _clean_feed():
    """Delete only this process's feed keys (never FLUSHDB a shared Redis)."""
    yield
    client = _client(settings.REDIS_URL)
    keys = list(client.scan_iter(match=f"{settings.CACHE_KEY_PREFIX}:feed:*", count=1000))
    if keys:
        client.delete(*keys)


@pytest.fixture
def emit_committed(django_capture_on_commit_callbacks):
    """Emit as a service would, inside a transaction, and run the after-commit fan-out."""

    def _emit(org, type_="message.delivered", data=None):
        with django_capture_on_commit_callbacks(execute=True), transaction.atomic():
            return emit(organization=org, type=type_, data=data or {"n": 1})

    return _emit


@pytest.fixture
def closed_port() -> int:
    """A local port nothing listens on (for an unreachable Redis)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def member_client():
    """A session client for a new member of `tenant` with the given role."""

    def _client_for(tenant, role: str):
        owner = Principal(kind="session", organization=tenant.org, role="owner",
                          user_id=tenant.owner.pk)
        with tenant_context(tenant.org):
            membership = services.user_invite(
                principal=owner, email=f"{role}-{tenant.org.slug}@example.com", name=role,
                role=role, password="Correct-Horse-9-battery",
            )
        return tenant.session_client(membership.user, "Correct-Horse-9-battery")

    return _client_for


def feed_ids(org) -> list[str]:
    entries, _ = get_feed().page(org.pk, before=None, limit=200)
    return [e.envelope["id"] for e in entries]
