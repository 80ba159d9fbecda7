"""Provider account routes under the cross-tenant test."""

from messaging.providers import services
from tests.cross_tenant import TenantRoute, register


def _account(tenant) -> str:
    account, _created = services.provider_account_put(
        organization=tenant.org, channel="whatsapp", provider="whatsapp_cloud",
        credentials={"access_token": "victim-token"},
        config={"phone_number_id": "106540352242922"},
    )
    return account.pk


register(TenantRoute(
    name="provider-accounts", list_url="/api/v1/providers",
    detail_url="/api/v1/providers/{id}", create=_account,
    patch_body={"provider": "whatsapp_cloud", "credentials": {"access_token": "x"},
                "config": {"phone_number_id": "1"}},
    methods=("GET", "PUT", "DELETE"),
))
