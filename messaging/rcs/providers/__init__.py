"""The RCS management provider of an organization: the sandbox double in test mode, Google's
RBM and Business Communications APIs in live mode (with the organization's `rcs` provider
account), else 503 PROVIDER_NOT_WIRED. See `base.py` for the interface."""

from __future__ import annotations

from platform_core.errors import APIError

from .base import Capability, Decision, RcsManagementProvider
from .google import GoogleRcsProvider
from .sandbox import SandboxRcsProvider

__all__ = ["Capability", "Decision", "RcsManagementProvider", "provider_for"]


def provider_for(organization) -> RcsManagementProvider:
    if organization.sandbox:
        return SandboxRcsProvider()
    from messaging.providers.models import ProviderAccount, ProviderName

    account = (ProviderAccount.objects.for_organization(organization)
               .filter(channel="rcs", provider=ProviderName.RCS_BUSINESS, enabled=True).first())
    if account is None:
        raise APIError("PROVIDER_NOT_WIRED",
                       "No RCS provider account in live mode: add one with PUT "
                       "/api/v1/providers/rcs (provider rcs_business), or use test mode.",
                       details={"channel": "rcs"})
    return GoogleRcsProvider(account)
