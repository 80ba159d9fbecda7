"""Broadcast routes under the cross-tenant test: list, detail and cancel."""

from datetime import timedelta

from django.utils import timezone

from platform_core.tenancy.context import tenant_context
from tests.cross_tenant import TenantRoute, register


def _broadcast(tenant) -> str:
    from contacts.models import ContactList
    from messaging.broadcasts import services

    with tenant_context(tenant.org):
        contact_list = ContactList.objects.create(organization=tenant.org, name="List")
        broadcast = services.broadcast_create(
            organization=tenant.org, principal=None, name="Sale", channel="sms", body="Hi",
            audience={"list_id": contact_list.pk},
            send_at=timezone.now() + timedelta(hours=1))
    return broadcast.pk


register(TenantRoute(
    name="broadcasts", list_url="/api/v1/broadcasts", detail_url="/api/v1/broadcasts/{id}",
    create=_broadcast, methods=("GET",),
))
register(TenantRoute(
    name="broadcast-cancel", detail_url="/api/v1/broadcasts/{id}/cancel", create=_broadcast,
    methods=("POST",),
))
