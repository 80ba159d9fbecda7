"""RCS routes under the cross-tenant test: brands, agents and every agent sub-route
(verify, devices, tester invite, templates by name, quality, capability)."""

from platform_core.tenancy.context import tenant_context
from tests.cross_tenant import TenantRoute, register

PHONE = {"phone": "+14155550123"}


def _brand(tenant) -> str:
    from messaging.rcs import services

    with tenant_context(tenant.org):
        return services.brand_create(organization=tenant.org, principal=None,
                                     name="Acme").pk


def _agent(tenant) -> str:
    from messaging.rcs import services

    with tenant_context(tenant.org):
        agent = services.agent_create(organization=tenant.org, principal=None,
                                      brand_id=_brand(tenant), display_name="Bot")
        services.device_add(agent=agent, principal=None, phone=PHONE["phone"])
        services.template_create(agent=agent, principal=None, name="hello", body="Hi")
        return agent.pk


B = "/api/v1/rcs/brands"
A = "/api/v1/rcs/bots"
register(TenantRoute(name="rcs-brands", list_url=B, detail_url=B + "/{id}", create=_brand,
                     patch_body={"name": "Hijacked"}, methods=("GET", "PATCH", "DELETE")))
register(TenantRoute(name="rcs-brand-submit", detail_url=B + "/{id}/submit", create=_brand,
                     methods=("POST",)))
register(TenantRoute(name="rcs-bots", list_url=A, detail_url=A + "/{id}", create=_agent,
                     methods=("GET", "DELETE"),
                     sub_urls=(A + "/{id}/quality", A + "/{id}/devices",
                               A + "/{id}/templates", A + "/{id}/templates/hello",
                               "/api/v1/rcs/capability/{id}/+14155550123")))
register(TenantRoute(name="rcs-bot-verify", detail_url=A + "/{id}/verify", create=_agent,
                     methods=("POST",)))
register(TenantRoute(name="rcs-bot-devices", detail_url=A + "/{id}/devices", create=_agent,
                     patch_body=PHONE, methods=("GET", "POST")))
register(TenantRoute(name="rcs-bot-device-remove",
                     detail_url=A + "/{id}/devices?phone=%2B14155550123", create=_agent,
                     methods=("DELETE",)))
register(TenantRoute(name="rcs-bot-tester-invite", detail_url=A + "/{id}/tester-invite",
                     create=_agent, patch_body=PHONE, methods=("POST",)))
register(TenantRoute(name="rcs-bot-templates", detail_url=A + "/{id}/templates",
                     create=_agent, patch_body={"name": "other", "body": "x"},
                     methods=("GET", "POST")))
register(TenantRoute(name="rcs-bot-template", detail_url=A + "/{id}/templates/hello",
                     create=_agent, patch_body={"body": "Hijacked"},
                     methods=("GET", "PUT", "DELETE")))
register(TenantRoute(name="rcs-bot-quality", detail_url=A + "/{id}/quality", create=_agent,
                     methods=("GET",)))
register(TenantRoute(name="rcs-capability",
                     detail_url="/api/v1/rcs/capability/{id}/+14155550123", create=_agent,
                     methods=("GET",)))
