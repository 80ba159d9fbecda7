"""Endpoint registration, listing, update, deletion and secret rotation (0-conventions 4)."""

from __future__ import annotations

import base64

import pytest
from django.db import connection

from platform_core.identity import services as identity
from platform_core.identity.models import KeyType
from platform_core.tenancy.context import tenant_context
from platform_core.webhooks.headers import REDACTED
from platform_core.webhooks.models import WebhookEndpoint

pytestmark = pytest.mark.django_db

URL = "http://127.0.0.1:9/hook"


def _key(tenant, scopes):
    _key, raw = identity.api_key_create(organization=tenant.org, name="k",
                                        key_type=KeyType.SECRET, mode=None, scopes=scopes)
    return tenant.client(raw)


def test_create_returns_secret_once(tenant, private_targets):
    response = tenant.client().post("/api/v1/webhooks", {
        "url": URL, "events": ["message.delivered", "message.failed"],
        "description": "orders", "headers": {"Authorization": "Bearer x", "X-Env": "prod"},
    }, format="json")
    assert response.status_code == 201, response.content
    data = response.json()["data"]
    assert data["id"].startswith("whk_")
    assert data["secret"].startswith("whsec_")
    assert len(base64.b64decode(data["secret"].removeprefix("whsec_"))) == 32
    assert data["events"] == ["message.delivered", "message.failed"]
    assert data["enabled"] is True
    assert data["disabled_reason"] is None
    assert data["headers"] == {"Authorization": REDACTED, "X-Env": "prod"}

    detail = tenant.client().get(f"/api/v1/webhooks/{data['id']}").json()["data"]
    assert "secret" not in detail
    listed = tenant.client().get("/api/v1/webhooks").json()["data"]
    assert all("secret" not in row for row in listed)

    # Encrypted at rest: neither the secret nor the custom header value is in the row.
    with connection.cursor() as cursor:
        cursor.execute("SELECT secret, headers_encrypted FROM webhooks_webhookendpoint "
                       "WHERE id = %s", [data["id"]])
        secret_col, headers_col = cursor.fetchone()
    assert data["secret"] not in secret_col
    assert "Bearer x" not in headers_col
    with tenant_context(tenant.org):
        row = WebhookEndpoint.objects.get(pk=data["id"])
    assert row.secret == data["secret"]
    assert row.headers["Authorization"] == "Bearer x"


def test_wildcard_and_event_validation(tenant, private_targets):
    client = tenant.client()
    ok = client.post("/api/v1/webhooks", {"url": URL, "events": ["*", "message.failed"]},
                     format="json")
    assert ok.status_code == 201
    assert ok.json()["data"]["events"] == ["*"]
    for events in ([], ["Not A Type"], "message.failed", ["message"]):
        bad = client.post("/api/v1/webhooks", {"url": URL, "events": events}, format="json")
        assert bad.status_code == 422, events
        assert bad.json()["error"]["details"]["issues"][0]["field"] == "events"


@pytest.mark.parametrize("headers", [
    {"Content-Type": "text/plain"},
    {"X-Service-Signature": "forged"},
    {"webhook-id": "x"},
    {"Bad Header": "x"},
    {"X-Ok": "line\r\nInjected: yes"},
    {"X-Ok": 5},
    ["not", "an", "object"],
])
def test_custom_header_validation(tenant, private_targets, headers):
    response = tenant.client().post("/api/v1/webhooks",
                                    {"url": URL, "events": ["*"], "headers": headers},
                                    format="json")
    assert response.status_code == 422, response.content
    assert response.json()["error"]["details"]["issues"][0]["field"] == "headers"


def test_list_is_cursor_paginated(tenant, private_targets, django_assert_max_num_queries):
    client = tenant.client()
    ids = [client.post("/api/v1/webhooks", {"url": URL, "events": ["*"]}, format="json")
           .json()["data"]["id"] for _ in range(3)]
    with django_assert_max_num_queries(4):
        first = client.get("/api/v1/webhooks?limit=2")
    body = first.json()
    assert body["meta"]["pagination"]["has_more"] is True
    second = client.get(f"/api/v1/webhooks?limit=2&cursor={body['meta']['pagination']['cursor']}")
    seen = [r["id"] for r in body["data"]] + [r["id"] for r in second.json()["data"]]
    assert seen == list(reversed(ids))


def test_patch_update_and_delete(tenant, private_targets):
    client = tenant.client()
    created = client.post("/api/v1/webhooks", {
        "url": URL, "events": ["message.failed"],
        "headers": {"Authorization": "Bearer keep-me", "X-Env": "a"},
    }, format="json").json()["data"]
    url = f"/api/v1/webhooks/{created['id']}"

    # Sending the redacted value back keeps the stored secret.
    response = client.patch(url, {"events": ["message.delivered"], "description": "d",
                                  "headers": {"Authorization": REDACTED, "X-Env": "b"}},
                            format="json")
    assert response.status_code == 200, response.content
    data = response.json()["data"]
    assert data["events"] == ["message.delivered"]
    assert data["description"] == "d"
    assert data["headers"] == {"Authorization": REDACTED, "X-Env": "b"}
    with tenant_context(tenant.org):
        assert WebhookEndpoint.objects.get(pk=created["id"]).headers == {
            "Authorization": "Bearer keep-me", "X-Env": "b"}
    # A redacted value for a header that was never stored is refused.
    bad = client.patch(url, {"headers": {"X-Api-Key": REDACTED}}, format="json")
    assert bad.status_code == 422

    disabled = client.patch(url, {"enabled": False}, format="json").json()["data"]
    assert disabled["enabled"] is False
    assert disabled["disabled_reason"] == "manual"
    assert client.patch(url, {"url": "ftp://example.com/x"}, format="json").status_code == 422

    assert client.delete(url).status_code == 204
    assert client.get(url).status_code == 404
    assert client.delete(url).status_code == 404


def test_scopes(tenant, private_targets):
    created = tenant.client().post("/api/v1/webhooks", {"url": URL, "events": ["*"]},
                                   format="json").json()["data"]
    reader = _key(tenant, ["webhooks:read"])
    assert reader.get("/api/v1/webhooks").status_code == 200
    assert reader.get(f"/api/v1/webhooks/{created['id']}/deliveries").status_code == 200
    for response in (
        reader.post("/api/v1/webhooks", {"url": URL, "events": ["*"]}, format="json"),
        reader.patch(f"/api/v1/webhooks/{created['id']}", {"enabled": False}, format="json"),
        reader.delete(f"/api/v1/webhooks/{created['id']}"),
        reader.post(f"/api/v1/webhooks/{created['id']}/rotate-secret"),
    ):
        assert response.status_code == 403
        assert response.json()["error"]["details"]["required_scope"] == "webhooks:write"
    outsider = _key(tenant, ["contacts:read"])
    assert outsider.get("/api/v1/webhooks").status_code == 403
    writer = _key(tenant, ["webhooks:write"])
    assert writer.post("/api/v1/webhooks", {"url": URL, "events": ["*"]},
                       format="json").status_code == 201
    assert writer.get("/api/v1/webhooks").status_code == 200  # write implies read


def test_rotate_secret_returns_the_new_secret_once(tenant, private_targets):
    created = tenant.client().post("/api/v1/webhooks", {"url": URL, "events": ["*"]},
                                   format="json").json()["data"]
    response = tenant.client().post(f"/api/v1/webhooks/{created['id']}/rotate-secret")
    assert response.status_code == 200
    secret = response.json()["data"]["secret"]
    assert secret.startswith("whsec_")
    assert secret != created["secret"]
    assert "secret" not in tenant.client().get(f"/api/v1/webhooks/{created['id']}").json()["data"]
    with tenant_context(tenant.org):
        assert WebhookEndpoint.objects.get(pk=created["id"]).secret == secret


def test_other_tenant_cannot_act_on_deliveries_or_rotate(tenant, other_tenant, private_targets):
    created = tenant.client().post("/api/v1/webhooks", {"url": URL, "events": ["*"]},
                                   format="json").json()["data"]
    intruder = other_tenant.client()
    assert intruder.post(f"/api/v1/webhooks/{created['id']}/rotate-secret").status_code == 404
    assert intruder.get(f"/api/v1/webhooks/{created['id']}/deliveries").status_code == 404
    assert intruder.post(
        f"/api/v1/webhooks/{created['id']}/deliveries/dlv_X/retry").status_code == 404
