"""Fixtures of the webhook tests: a loopback receiver, endpoints, emitting through the bus."""

from __future__ import annotations

from datetime import timedelta

import pytest
import time_machine
from django.db import transaction
from django.utils import timezone

from platform_core.net import http
from platform_core.tenancy.context import tenant_context
from platform_core.webhooks import services
from platform_core.webhooks.models import WebhookDelivery, WebhookEndpoint

from .receivers import start_receiver


@pytest.fixture
def private_targets(settings):
    """Loopback receivers are private addresses: allow them for this test."""
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
def make_endpoint(tenant):
    def make(url: str, events=("message.delivered",), headers=None, client=None, **extra):
        body = {"url": url, "events": list(events), **extra}
        if headers is not None:
            body["headers"] = headers
        response = (client or tenant.client()).post("/api/v1/webhooks", body, format="json")
        assert response.status_code == 201, response.content
        return response.json()["data"]

    return make


@pytest.fixture
def emit(django_capture_on_commit_callbacks):
    """Emit through the bus and run everything queued after commit (fan-out, attempts)."""
    from platform_core.events.bus import emit as bus_emit

    def do(tenant, type_="message.delivered", data=None):
        with django_capture_on_commit_callbacks(execute=True), transaction.atomic():
            event = bus_emit(organization=tenant.org, type=type_,
                             data=data if data is not None else {"message_id": "msg_1"})
        return event

    return do


@pytest.fixture
def run_due(django_capture_on_commit_callbacks):
    """Travel `seconds` ahead and run the beat job that dispatches due deliveries."""

    def do(seconds: float = 0):
        target = timezone.now() + timedelta(seconds=seconds)
        with time_machine.travel(target, tick=True), \
                django_capture_on_commit_callbacks(execute=True):
            return services.deliveries_dispatch_due()

    return do


def deliveries(tenant, **filters):
    with tenant_context(tenant.org):
        return list(WebhookDelivery.objects.filter(**filters).order_by("id"))


def endpoint_row(tenant, endpoint_id):
    with tenant_context(tenant.org):
        return WebhookEndpoint.objects.get(pk=endpoint_id)
