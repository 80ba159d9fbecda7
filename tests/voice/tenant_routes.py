"""IVR flow routes under the cross-tenant test."""

from platform_core.identity.principal import Principal
from platform_core.tenancy.context import tenant_context
from tests.cross_tenant import TenantRoute, register

from .conftest import FLOW


def _flow(tenant) -> str:
    from voice import services

    principal = Principal(kind="session", organization=tenant.org, role="owner",
                          user_id=tenant.owner.pk)
    with tenant_context(tenant.org):
        return services.flow_create(principal=principal, name="Main", active=True,
                                    definition=FLOW).pk


register(TenantRoute(name="ivr-flows", list_url="/api/v1/voice/ivr-flows",
                     detail_url="/api/v1/voice/ivr-flows/{id}", create=_flow,
                     patch_body={"name": "Hijacked"}, methods=("GET", "PATCH", "DELETE"),
                     sub_urls=("/api/v1/voice/ivr-flows/{id}/twiml",)))
