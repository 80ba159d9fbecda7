"""Messaging routes under the cross-tenant test: messages (with cancel) and messaging
services."""

from datetime import timedelta

from django.utils import timezone

from platform_core.tenancy.context import tenant_context
from tests.cross_tenant import TenantRoute, register


def _message(tenant) -> str:
    from messaging import services

    with tenant_context(tenant.org):
        message = services.message_send(
            organization=tenant.org, channel="sms", to="+14155550123", body="hello",
            send_at=timezone.now() + timedelta(hours=1))
    return message.pk


def _service(tenant) -> str:
    from messaging import services

    with tenant_context(tenant.org):
        service = services.messaging_service_create(
            organization=tenant.org, principal=None, name="Alerts",
            senders=[{"channel": "sms", "from": "+14155550100"}])
    return service.pk


register(TenantRoute(
    name="messages", list_url="/api/v1/messages", detail_url="/api/v1/messages/{id}",
    create=_message, methods=("GET",),
))
register(TenantRoute(
    name="message-cancel", detail_url="/api/v1/messages/{id}/cancel", create=_message,
    methods=("POST",),
))
register(TenantRoute(
    name="messaging-services", list_url="/api/v1/messaging-services",
    detail_url="/api/v1/messaging-services/{id}", create=_service,
    patch_body={"name": "Hijacked"}, methods=("GET", "PATCH", "DELETE"),
))
