"""Platform-core routes under the cross-tenant test."""

from platform_core.identity import services
from platform_core.identity.models import KeyType
from tests.cross_tenant import TenantRoute, register


def _api_key(tenant) -> str:
    key, _raw = services.api_key_create(
        organization=tenant.org, name="victim", key_type=KeyType.SECRET, mode=None,
        scopes=["contacts:read"],
    )
    return key.pk


def _member(tenant) -> str:
    from platform_core.tenancy.context import tenant_context

    with tenant_context(tenant.org):
        from platform_core.identity.principal import Principal

        owner = Principal(kind="session", organization=tenant.org, role="owner",
                          user_id=tenant.owner.pk)
        membership = services.user_invite(principal=owner, email=f"m-{tenant.org.slug}@example.com",
                                          name="Member", role="viewer", password=None)
    return membership.user_id


register(TenantRoute(name="api-keys", list_url="/api/v1/api-keys",
                     detail_url="/api/v1/api-keys/{id}", create=_api_key,
                     methods=("GET", "DELETE")))
register(TenantRoute(name="users", list_url="/api/v1/users", detail_url="/api/v1/users/{id}",
                     create=_member, patch_body={"role": "admin"},
                     methods=("GET", "PATCH", "DELETE")))
