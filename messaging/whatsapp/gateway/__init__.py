"""Which WhatsApp gateway serves an organization: the sandbox double in test mode, else
the Graph API with the organization's token (its `whatsapp` ProviderAccount)."""

from __future__ import annotations

from platform_core.errors import APIError

from .base import WhatsAppGateway
from .graph import GraphGateway
from .sandbox import SandboxGateway


def account_for(organization):
    from messaging.providers.models import ProviderAccount

    return (ProviderAccount.objects.for_organization(organization)
            .filter(channel="whatsapp").first())


def gateway_for(organization, *, connecting: bool = False) -> WhatsAppGateway:
    """The gateway for `organization`. `connecting`: before a token exists (the code
    exchange), the live gateway starts without one."""
    if organization.sandbox:
        return SandboxGateway(organization)
    account = account_for(organization)
    if connecting:
        return GraphGateway(token=None, base_url=(account.base_url if account else None)
                            or None)
    token = account.credentials.get("access_token") if account else None
    if not token:
        raise APIError("WHATSAPP_NOT_CONNECTED")
    return GraphGateway(token=str(token), base_url=account.base_url or None,
                        version=account.setting("api_version"))


__all__ = ["GraphGateway", "SandboxGateway", "WhatsAppGateway", "account_for", "gateway_for"]
