"""Segment routes under the cross-tenant test."""

from contacts.segments import services
from platform_core.identity.principal import Principal
from platform_core.tenancy.context import tenant_context
from tests.contacts.segments.helpers import contact
from tests.cross_tenant import TenantRoute, register


def _segment(tenant) -> str:
    contact(tenant, first_name="Victim", tags=["vip"])
    owner = Principal(kind="session", organization=tenant.org, role="owner",
                      user_id=tenant.owner.pk)
    with tenant_context(tenant.org):
        segment = services.segment_create(
            principal=owner, name="Victims",
            filters={"op": "and", "rules": [{"field": "tags", "operator": "eq", "value": "vip"}]},
        )
    return segment.pk


register(TenantRoute(
    name="segments", list_url="/api/v1/contacts/segments",
    detail_url="/api/v1/contacts/segments/{id}", create=_segment,
    patch_body={"name": "Hacked", "filters": {"op": "and", "rules": []}},
    sub_urls=("/api/v1/contacts/segments/{id}/members",
              "/api/v1/contacts/segments/{id}/export.csv"),
))
