"""Ads routes under the cross-tenant test."""

from platform_core.identity.principal import Principal
from platform_core.tenancy.context import tenant_context
from tests.cross_tenant import TenantRoute, register


def _campaign(tenant) -> str:
    from ads import services

    principal = Principal(kind="session", organization=tenant.org, role="owner",
                          user_id=tenant.owner.pk)
    with tenant_context(tenant.org):
        services.connect(principal=principal, ad_account_id="123", access_token="tok")
        return services.campaign_create(principal=principal, name="Spring", channel="whatsapp",
                                        daily_budget=5000).pk


register(TenantRoute(name="ads-campaigns", list_url="/api/v1/ads/campaigns",
                     detail_url="/api/v1/ads/campaigns/{id}", create=_campaign,
                     methods=("GET", "DELETE")))
