"""Fixtures of the provider tests: the loopback provider APIs, live tenants, accounts."""

from __future__ import annotations

import pytest

from platform_core.net import http
from tests.conftest import make_tenant

from . import fakes


@pytest.fixture
def fast_retries(settings):
    """Loopback targets allowed; short backoff and a small breaker for quick tests."""
    settings.ALLOW_PRIVATE_WEBHOOK_TARGETS = True
    settings.PROVIDER_HTTP_BACKOFF_BASE = 0.01
    settings.PROVIDER_HTTP_BACKOFF_MAX = 0.05
    settings.PROVIDER_HTTP_MAX_ATTEMPTS = 3
    settings.PROVIDER_HTTP_MAX_TOTAL_SECONDS = 10
    settings.PROVIDER_HTTP_TIMEOUT = 5
    settings.PROVIDER_BREAKER_THRESHOLD = 3
    settings.PROVIDER_BREAKER_COOLDOWN_SECONDS = 30
    yield settings
    http.close_connections()


@pytest.fixture
def fake(fast_retries):
    server = fakes.start_fake()
    yield server
    server.close()


@pytest.fixture
def live_tenant(db):
    return make_tenant(sandbox=False)


def twilio_body(fake, **config):
    return {"provider": "twilio", "base_url": fake.url,
            "credentials": {"auth_token": fakes.TWILIO_TOKEN},
            "config": {"account_sid": fakes.TWILIO_SID, "from": "+15557770000", **config}}


def whatsapp_body(fake, **config):
    return {"provider": "whatsapp_cloud", "base_url": fake.url,
            "credentials": {"access_token": fakes.WA_TOKEN},
            "config": {"phone_number_id": fakes.WA_PHONE_ID, "waba_id": "102290129340398",
                       **config}}


def rcs_body(fake, **credentials):
    return {"provider": "rcs_business", "base_url": fake.url,
            "credentials": credentials or {"access_token": fakes.RCS_TOKEN},
            "config": {"agent_id": fakes.RCS_AGENT}}


@pytest.fixture
def put_account():
    """PUT /api/v1/providers/{channel} as the tenant; returns the account's data."""

    def put(tenant, channel, body, expect=(200, 201)):
        response = tenant.client().put(f"/api/v1/providers/{channel}", body, format="json")
        assert response.status_code in expect, response.content
        return response.json()["data"]

    return put


@pytest.fixture
def account_row():
    def get(tenant, channel):
        from messaging.providers.models import ProviderAccount

        return ProviderAccount.objects.for_organization(tenant.org).get(channel=channel)

    return get
