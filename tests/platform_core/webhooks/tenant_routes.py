"""Webhook routes under the cross-tenant test: the endpoint and its deliveries sub-route."""

from platform_core.tenancy.context import tenant_context
from tests.cross_tenant import TenantRoute, register


def _endpoint(tenant) -> str:
    from django.test import override_settings

    from platform_core.webhooks import services

    with override_settings(ALLOW_PRIVATE_WEBHOOK_TARGETS=True), tenant_context(tenant.org):
        endpoint, _secret = services.endpoint_create(
            organization=tenant.org, url="http://127.0.0.1:9/hook", events=["*"])
    return endpoint.pk


def _delivery(tenant) -> str:
    from platform_core.webhooks.models import WebhookDelivery

    endpoint_id = _endpoint(tenant)
    with tenant_context(tenant.org):
        delivery = WebhookDelivery.objects.create(
            organization=tenant.org, endpoint_id=endpoint_id, event_id="evt_CROSS",
            event_type="message.failed", payload={"id": "evt_CROSS"}, status="failed")
    return f"{endpoint_id}/deliveries/{delivery.pk}"


register(TenantRoute(
    name="webhooks", list_url="/api/v1/webhooks", detail_url="/api/v1/webhooks/{id}",
    create=_endpoint, patch_body={"enabled": False}, methods=("GET", "PATCH", "DELETE"),
    sub_urls=("/api/v1/webhooks/{id}/deliveries",),
))
register(TenantRoute(
    name="webhook-deliveries", detail_url="/api/v1/webhooks/{id}", create=_delivery,
    methods=("GET",),
))
