"""Which provider sends an organization's message on a channel (messaging contract).

    register_provider("twilio", TwilioProvider)        # from an AppConfig.ready()
    provider, account = provider_for(organization, "sms")

- Test mode (`organization.sandbox`): always the sandbox double (`sandbox.SandboxProvider`),
  which never makes an outside call, whatever accounts the organization holds.
- Live mode: the organization's enabled `ProviderAccount` for the channel (the providers
  family's model; its `provider` names a registered adapter). When none is kept for the
  channel itself, an enabled account whose adapter also serves the channel is used (a
  Twilio account kept for `sms` also sends `mms`, `voice` and, once it has a
  `flashcall_prefix`, `flashcall`). Email without an account
  uses the deployment's SMTP server when `EMAIL_URL` is set (adapter "smtp", account None).
- Nothing fits: `APIError` 503 `PROVIDER_NOT_WIRED` naming the channel. The send API calls
  `provider_for` before it creates the message, so a live send without a provider answers
  503 synchronously and stores nothing.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from django.apps import apps
from django.conf import settings

from platform_core.errors import APIError

from .base import Provider

logger = logging.getLogger("messaging.providers")

SANDBOX = "sandbox"

ProviderFactory = Callable[[], Provider]
_FACTORIES: dict[str, ProviderFactory] = {}
_INSTANCES: dict[str, Provider] = {}


def register_provider(name: str, factory: ProviderFactory) -> None:
    """Register an adapter under `name` (a class or any callable answering a Provider)."""
    _FACTORIES[name] = factory
    _INSTANCES.pop(name, None)


def registered_providers() -> list[str]:
    return sorted(_FACTORIES)


def get_provider(name: str) -> Provider | None:
    """The (shared, stateless) adapter registered as `name`, or None."""
    provider = _INSTANCES.get(name)
    if provider is None:
        factory = _FACTORIES.get(name)
        if factory is None:
            return None
        provider = _INSTANCES[name] = factory()
    return provider


def _not_wired(channel: str, detail: str) -> APIError:
    return APIError(
        "PROVIDER_NOT_WIRED",
        f"No provider is configured for the {channel} channel in live mode. {detail}",
        details={"channel": channel},
    )


def _account_model():
    try:
        return apps.get_model("providers", "ProviderAccount")
    except LookupError:
        return None


def _account_provider_name(account) -> str:
    return str(getattr(account, "provider", "") or getattr(account, "provider_name", "") or "")


def _account_serves(account, channel: str) -> bool:
    """A flash call needs the caller id range it rings from: an account without one does
    not serve the channel (503, not a message failing at the provider)."""
    if channel != "flashcall":
        return True
    setting = getattr(account, "setting", None)
    return bool(setting("flashcall_prefix")) if callable(setting) else False


def provider_for(organization, channel: str) -> tuple[Provider, object | None]:
    """The provider and the account that send `organization`'s messages on `channel`."""
    if organization.sandbox:
        provider = get_provider(SANDBOX)
        if provider is None:  # pragma: no cover - registered by the messaging app
            raise _not_wired(channel, "The sandbox double is not registered.")
        return provider, None

    model = _account_model()
    if model is not None:
        accounts = list(
            model.objects.for_organization(organization).filter(enabled=True).order_by("pk")
        )
        # The channel's own account first, then any account whose adapter serves it.
        ordered = [a for a in accounts if getattr(a, "channel", None) == channel]
        ordered += [a for a in accounts if getattr(a, "channel", None) != channel]
        for account in ordered:
            provider = get_provider(_account_provider_name(account))
            if provider is not None and channel in provider.channels \
                    and _account_serves(account, channel):
                return provider, account
            if provider is None and getattr(account, "channel", None) == channel:
                logger.warning("provider account %s names an unregistered adapter %r",
                               account.pk, _account_provider_name(account))

    if channel == "email" and getattr(settings, "EMAIL_URL", ""):
        provider = get_provider("smtp")
        if provider is not None:
            return provider, None
    raise _not_wired(
        channel, "Add a provider account for it (or EMAIL_URL for email), or use test mode."
    )
