"""The developers screens through Django's test client: role gates (the server refuses what
the page does not offer), validation answered as the API's 422, another organization's
objects answering like missing ones, and the query count of the list pages."""

from __future__ import annotations

import pytest
from django.utils import timezone

from platform_core.events.bus import emit
from platform_core.identity import services as identity_services
from platform_core.identity.models import APIKey
from platform_core.tenancy.context import tenant_context
from platform_core.webhooks import services as webhook_services
from platform_core.webhooks.models import DeliveryStatus, WebhookDelivery
from tests.conftest import make_tenant
from tests.platform_core.accounts.conftest import add_member

from .conftest import client_as

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture(autouse=True)
def _loopback_targets(settings):
    """Endpoints here point at loopback (names are resolved when an endpoint is saved)."""
    settings.ALLOW_PRIVATE_WEBHOOK_TARGETS = True




def _endpoint(tenant, url="http://127.0.0.1:9/in"):
    with tenant_context(tenant.org):
        endpoint, _secret = webhook_services.endpoint_create(
            organization=tenant.org, url=url, events=["contact.created"])
    return endpoint


def _failed_delivery(tenant, endpoint) -> WebhookDelivery:
    with tenant_context(tenant.org):
        return WebhookDelivery.objects.create(
            organization=tenant.org, endpoint=endpoint, event_id="evt_01TEST",
            event_type="contact.created",
            payload={"id": "evt_01TEST", "type": "contact.created", "data": {"id": "cnt_1"}},
            status=DeliveryStatus.FAILED, attempts=2, failed_at=timezone.now(),
            response_status=500, last_response_body="boom",
            request_headers={"X-Service-Event-Type": "contact.created"})


def test_viewer_sees_no_key_screen_and_its_writes_are_refused():
    tenant = make_tenant()
    viewer = client_as(add_member(tenant, "viewer"), tenant.org)
    # The API opens keys to owners, admins and developers only (role gate on the scope).
    assert viewer.get("/dashboard/developers/api-keys").status_code == 403
    response = viewer.post("/dashboard/developers/api-keys", {"name": "x", "scopes": "*"})
    assert response.status_code == 403
    with tenant_context(tenant.org):
        assert APIKey.objects.count() == 1  # the bootstrap key only
        response = viewer.post(f"/dashboard/developers/api-keys/{tenant.key.pk}/revoke")
        assert response.status_code == 403
        assert APIKey.objects.get(pk=tenant.key.pk).revoked_at is None
    # Webhooks: a viewer reads (webhooks:read) but sees no write control, and writing fails.
    endpoint = _endpoint(tenant)
    page = viewer.get("/dashboard/developers/webhooks")
    assert page.status_code == 200
    assert b'id="endpoint-form"' not in page.content
    assert endpoint.url.encode() in page.content
    detail = viewer.get(f"/dashboard/developers/webhooks/{endpoint.pk}")
    assert b"endpoint-disable" not in detail.content
    assert b"endpoint-edit-form" not in detail.content
    response = viewer.post(f"/dashboard/developers/webhooks/{endpoint.pk}/enabled",
                           {"enabled": "0"})
    assert response.status_code == 403
    response = viewer.post("/dashboard/developers/webhooks",
                           {"url": "http://127.0.0.1:9/x", "events": "*"})
    assert response.status_code == 403


def test_developer_creates_a_key_but_cannot_grant_full_access():
    tenant = make_tenant()
    developer = client_as(add_member(tenant, "developer"), tenant.org)
    page = developer.get("/dashboard/developers/api-keys")
    assert page.status_code == 200
    assert b'id="key-form"' in page.content
    # `*` is only for owners and admins: the service refuses it, as on the API.
    response = developer.post("/dashboard/developers/api-keys",
                              {"name": "ci", "type": "secret", "scopes": "*"}, **HTMX)
    assert response.status_code == 403
    assert b"INSUFFICIENT_PERMISSIONS" in response.content
    response = developer.post("/dashboard/developers/api-keys",
                              {"name": "ci", "type": "secret", "scopes": ["contacts:read"],
                               "other_scopes": "messages:write"}, **HTMX)
    assert response.status_code == 200
    with tenant_context(tenant.org):
        key = APIKey.objects.get(name="ci")
    assert key.scopes == ["contacts:read", "messages:write"]
    assert f'value="{key.prefix}'.encode() in response.content  # the full key, once
    assert response["Cache-Control"] == "no-store"
    assert b'hx-swap-oob="true"' in response.content  # and the refreshed list
    assert developer.get("/dashboard/developers/api-keys").content.count(
        key.prefix.encode()) == 1  # later only the prefix shows


def test_key_form_refusals_are_the_apis_validation_errors():
    tenant = make_tenant()
    owner = client_as(tenant.owner, tenant.org)
    response = owner.post("/dashboard/developers/api-keys",
                          {"name": "", "scopes": "contacts:read"}, **HTMX)
    assert response.status_code == 422
    assert response["HX-Retarget"] == "#flash"
    response = owner.post("/dashboard/developers/api-keys",
                          {"name": "pub", "type": "public", "scopes": "contacts:write"}, **HTMX)
    assert response.status_code == 422
    assert b"read-only scopes" in response.content
    response = owner.post("/dashboard/developers/api-keys",
                          {"name": "ip", "scopes": "*", "allowed_ips": "not-an-ip"}, **HTMX)
    assert response.status_code == 422


def test_another_organizations_key_and_endpoint_answer_like_missing_ones():
    tenant, other = make_tenant(), make_tenant()
    owner = client_as(tenant.owner, tenant.org)
    response = owner.post(f"/dashboard/developers/api-keys/{other.key.pk}/revoke", **HTMX)
    assert response.status_code == 404
    with tenant_context(other.org):
        assert APIKey.objects.get(pk=other.key.pk).revoked_at is None
    endpoint = _endpoint(other)
    assert owner.get(f"/dashboard/developers/webhooks/{endpoint.pk}").status_code == 404
    assert owner.post(f"/dashboard/developers/webhooks/{endpoint.pk}/enabled",
                      {"enabled": "0"}, **HTMX).status_code == 404
    response = owner.post(f"/dashboard/developers/webhooks/{endpoint.pk}/delete")
    assert response.status_code == 302  # a plain form: back to the page, with the error
    assert response["Location"] == f"/dashboard/developers/webhooks/{endpoint.pk}"
    with tenant_context(other.org):
        endpoint.refresh_from_db()
    assert endpoint.enabled


def test_endpoint_edit_disable_and_delivery_retry():
    tenant = make_tenant()
    owner = client_as(tenant.owner, tenant.org)
    endpoint = _endpoint(tenant)
    response = owner.post(f"/dashboard/developers/webhooks/{endpoint.pk}", {
        "url": "http://127.0.0.1:9/v2", "events": "contact.created, message.failed",
        "description": "CRM", "headers": "X-Team: crm"})
    assert response.status_code == 302
    with tenant_context(tenant.org):
        endpoint.refresh_from_db()
    assert endpoint.url == "http://127.0.0.1:9/v2"
    assert endpoint.events == ["contact.created", "message.failed"]
    assert endpoint.headers == {"X-Team": "crm"}
    # Bad input is the API's 422, shown, nothing saved.
    response = owner.post(f"/dashboard/developers/webhooks/{endpoint.pk}",
                          {"url": "http://127.0.0.1:9/v3", "events": "Not A Type"},
                          **HTMX)
    assert response.status_code == 422
    response = owner.post(f"/dashboard/developers/webhooks/{endpoint.pk}/enabled",
                          {"enabled": "0"})
    assert response.status_code == 302
    with tenant_context(tenant.org):
        endpoint.refresh_from_db()
    assert not endpoint.enabled
    assert endpoint.disabled_reason == "manual"

    delivery = _failed_delivery(tenant, endpoint)
    base = f"/dashboard/developers/webhooks/{endpoint.pk}/deliveries/{delivery.pk}"
    detail = owner.get(base, **HTMX)
    assert b"boom" in detail.content
    assert b"delivery-replay" in detail.content
    response = owner.post(f"{base}/retry", **HTMX)
    assert response.status_code == 200
    with tenant_context(tenant.org):
        delivery.refresh_from_db()
    assert delivery.status == "pending"
    # Not failed any more: the service's 409, as on the API.
    assert owner.post(f"{base}/retry", **HTMX).status_code == 409
    assert owner.post(f"{base}/replay", **HTMX).status_code == 409


def test_list_pages_query_counts(django_assert_max_num_queries):
    tenant = make_tenant()
    owner = client_as(tenant.owner, tenant.org)
    for n in range(5):
        with tenant_context(tenant.org):
            identity_services.api_key_create(organization=tenant.org, name=f"k{n}",
                                             key_type="secret", mode=None, scopes=["*"],
                                             created_by_id=tenant.owner.pk)
    endpoint = _endpoint(tenant)
    for n in range(5):
        with tenant_context(tenant.org):
            WebhookDelivery.objects.create(
                organization=tenant.org, endpoint=endpoint, event_id=f"evt_{n}",
                event_type="contact.created", payload={}, status=DeliveryStatus.SUCCEEDED)
    for path in ("/dashboard/developers/api-keys", "/dashboard/developers/webhooks",
                 f"/dashboard/developers/webhooks/{endpoint.pk}",
                 "/dashboard/developers/"):
        with django_assert_max_num_queries(8):
            assert owner.get(path).status_code == 200, path


def test_event_feed_page_lists_recent_events():
    tenant = make_tenant()
    with tenant_context(tenant.org):
        emit(organization=tenant.org, type="contact.created", data={"id": "cnt_feed"})
    from platform_core.events.bus import drain

    drain()
    page = client_as(tenant.owner, tenant.org).get("/dashboard/developers/events")
    assert page.status_code == 200
    assert b"data-live" in page.content
    assert b"contact.created" in page.content
    assert b"cnt_feed" in page.content


def test_delivery_log_pages_to_older_deliveries(monkeypatch):
    from dashboard.screens.developers import webhooks as screen

    monkeypatch.setattr(screen, "LOG_SIZE", 2)
    tenant = make_tenant()
    owner = client_as(tenant.owner, tenant.org)
    endpoint = _endpoint(tenant)
    with tenant_context(tenant.org):
        ids = [WebhookDelivery.objects.create(
            organization=tenant.org, endpoint=endpoint, event_id=f"evt_{n}",
            event_type="contact.created", payload={}, status=DeliveryStatus.SUCCEEDED).pk
            for n in range(3)]
    page = owner.get(f"/dashboard/developers/webhooks/{endpoint.pk}").content.decode()
    assert [i in page for i in ids] == [False, True, True]  # newest first
    assert f"before={ids[1]}" in page
    older = owner.get(f"/dashboard/developers/webhooks/{endpoint.pk}/deliveries?before={ids[1]}",
                      **HTMX).content.decode()
    assert [i in older for i in ids] == [True, False, False]
    assert "deliveries-older" not in older
    assert 'hx-trigger="none"' in older  # a paged view is not replaced by live refreshes
