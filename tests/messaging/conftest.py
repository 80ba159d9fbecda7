"""Fixtures of the messaging tests: sending through HTTP with the after-commit work run,
a loopback webhook receiver, event and message reads.

The test settings run Celery eagerly: the send task, the sandbox's delivery receipt (its
countdown is ignored eagerly) and the status callbacks run inside `commit()`, which
executes every callback registered with `transaction.on_commit` (and those they register).
"""

from __future__ import annotations

import pytest

from messaging.models import Message
from platform_core.events.models import Event
from platform_core.net import http
from platform_core.tenancy.context import tenant_context
from tests.platform_core.webhooks.receivers import start_receiver

SANDBOX_FAIL = "+15005550009"
SANDBOX_NO_RECEIPT = "+15005550010"
USER = "+14155550123"
USER_2 = "+14155550124"
BUSINESS = "+14155550100"
BUSINESS_2 = "+14155550101"


@pytest.fixture
def private_targets(settings):
    settings.ALLOW_PRIVATE_WEBHOOK_TARGETS = True
    settings.WEBHOOK_TIMEOUT_SECONDS = 2.0
    yield settings
    http.close_connections()


@pytest.fixture
def receiver(private_targets):
    r = start_receiver()
    yield r
    r.close()


@pytest.fixture
def commit(django_capture_on_commit_callbacks):
    """`with commit(): ...` runs the after-commit work of the block (tasks, fan-out)."""

    def make():
        return django_capture_on_commit_callbacks(execute=True)

    return make


@pytest.fixture
def send(tenant, commit):
    """POST a message as `tenant` (or `client`) and run what follows the commit."""

    def do(body: dict, *, client=None, path: str = "/api/v1/messages", headers=None):
        with commit():
            return (client or tenant.client()).post(path, body, format="json",
                                                    **(headers or {}))

    return do


@pytest.fixture
def make_endpoint(tenant):
    def make(url: str, events=("*",), client=None):
        response = (client or tenant.client()).post(
            "/api/v1/webhooks", {"url": url, "events": list(events)}, format="json")
        assert response.status_code == 201, response.content
        return response.json()["data"]

    return make


def events(tenant, prefix: str = "") -> list[Event]:
    rows = Event.objects.for_organization(tenant.org).order_by("created_at", "id")
    return [e for e in rows if e.type.startswith(prefix)]


def message_events(tenant, message_id: str) -> list[Event]:
    return [e for e in events(tenant, "message.") if e.data.get("message_id") == message_id]


def load(tenant, message_id: str) -> Message:
    with tenant_context(tenant.org):
        return Message.objects.get(pk=message_id)


def messages(tenant, **filters) -> list[Message]:
    with tenant_context(tenant.org):
        return list(Message.objects.filter(**filters).order_by("created_at", "id"))
