"""Fixtures of the template tests: bodies, clients with chosen scopes, the Graph fake."""

from __future__ import annotations

import pytest

from platform_core.events.models import Event
from platform_core.identity import services as identity
from platform_core.identity.models import KeyMode, KeyType
from platform_core.net import http
from tests.conftest import make_tenant

from . import graph_fake

BASE = "/api/v1/messages/templates"
CONTENT = "/api/v1/messages/content-templates"


def wa_body(**overrides) -> dict:
    body = {
        "name": "order_update",
        "channel": "whatsapp",
        "category": "utility",
        "language": "en",
        "components": [
            {"type": "HEADER", "format": "TEXT", "text": "Order {{1}}"},
            {"type": "BODY", "text": "Hi {{2}}, your order {{1}} ships on {{3}}."},
            {"type": "FOOTER", "text": "Reply STOP to opt out"},
            {"type": "BUTTONS", "buttons": [
                {"type": "QUICK_REPLY", "text": "Thanks"},
                {"type": "URL", "text": "Track", "url": "https://shop.example/t/{{1}}"},
            ]},
        ],
    }
    body.update(overrides)
    return body


def sms_body(**overrides) -> dict:
    body = {"name": "Reminder", "channel": "sms", "language": "en",
            "content": "Hi {{1}}, see you at {{2}}."}
    body.update(overrides)
    return body


def create(tenant, body: dict, client=None) -> dict:
    response = (client or tenant.client()).post(BASE, body, format="json")
    assert response.status_code == 201, response.content
    return response.json()["data"]


def decide(tenant, template_id: str, decision: str = "approved", reason=None):
    body = {"decision": decision}
    if reason:
        body["reason"] = reason
    return tenant.client().post(f"/api/v1/sandbox/templates/{template_id}/decision", body,
                                format="json")


def error(response, status: int, code: str) -> dict:
    assert response.status_code == status, response.content
    payload = response.json()["error"]
    assert payload["code"] == code, payload
    return payload


def key_client(tenant, scopes: list[str]):
    _key, raw = identity.api_key_create(
        organization=tenant.org, name="scoped", key_type=KeyType.SECRET,
        mode=KeyMode.TEST if tenant.org.sandbox else KeyMode.LIVE, scopes=scopes)
    return tenant.client(raw)


def events(tenant, prefix: str = "template.") -> list[Event]:
    return list(Event.objects.for_organization(tenant.org).filter(type__startswith=prefix)
                .order_by("created_at", "id"))


@pytest.fixture
def graph(settings):
    settings.ALLOW_PRIVATE_WEBHOOK_TARGETS = True
    settings.PROVIDER_HTTP_BACKOFF_BASE = 0.01
    settings.PROVIDER_HTTP_BACKOFF_MAX = 0.05
    settings.PROVIDER_HTTP_TIMEOUT = 5
    fake = graph_fake.start()
    yield fake
    fake.close()
    http.close_connections()


@pytest.fixture
def live_tenant(db):
    return make_tenant(sandbox=False)


def whatsapp_account(tenant, fake, **config):
    from messaging.providers.models import ProviderAccount

    return ProviderAccount.objects.for_organization(tenant.org).create(
        organization=tenant.org, channel="whatsapp", provider="whatsapp_cloud",
        credentials={"access_token": graph_fake.TOKEN, "app_secret": graph_fake.APP_SECRET,
                     "verify_token": graph_fake.VERIFY_TOKEN},
        config={"phone_number_id": "106540352242922", "waba_id": graph_fake.WABA, **config},
        base_url=fake.url if fake else "")
