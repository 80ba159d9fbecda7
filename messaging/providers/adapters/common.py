"""What the HTTP adapters share: addresses, credentials, the outbound call, error mapping."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings

from messaging.providers.base import ProviderError, SendResult
from platform_core.net import provider_client

# Codes this platform puts in a message's error_code when the provider gave none.
MISCONFIGURED = "PROVIDER_MISCONFIGURED"
UNAVAILABLE = "PROVIDER_UNAVAILABLE"
REFUSED_TARGET = "PROVIDER_TARGET_REFUSED"


def require_account(account, provider: str):
    if account is None:
        raise ProviderError(f"The {provider} provider needs a provider account.",
                            retryable=False, code=MISCONFIGURED)
    return account


def setting(account, name: str, *, provider: str, required: bool = True) -> Any:
    """A config value or credential of the account; a missing required one fails the send."""
    value = account.setting(name)
    if required and value in (None, ""):
        raise ProviderError(
            f"The {provider} provider account has no `{name}`; set it with "
            f"PUT /api/v1/providers/{account.channel}.",
            retryable=False, code=MISCONFIGURED,
        )
    return value


def secret(account, name: str, *, provider: str) -> str:
    value = account.credentials.get(name)
    if not value:
        raise ProviderError(
            f"The {provider} provider account has no `{name}` credential; set it with "
            f"PUT /api/v1/providers/{account.channel}.",
            retryable=False, code=MISCONFIGURED,
        )
    return str(value)


def base_url(account, default: str) -> str:
    """The provider's API root: the account's override (tests) or the public address."""
    url = (getattr(account, "base_url", "") or default).rstrip("/")
    if urlsplit(url).scheme != "https" and not settings.ALLOW_PRIVATE_WEBHOOK_TARGETS:
        raise ProviderError("The provider address must use https.", retryable=False,
                            code=REFUSED_TARGET)
    return url


def call(provider: str, method: str, url: str, *, content: bytes = b"",
         headers: Mapping[str, str] | None = None) -> provider_client.ProviderResponse:
    """One provider call through the hardened client; transient failures become retryable."""
    try:
        return provider_client.request(provider, method, url, content=content, headers=headers)
    except provider_client.ProviderUnavailable as exc:
        retryable = exc.reason != "unsafe_target"
        raise ProviderError(exc.message, retryable=retryable,
                            code=UNAVAILABLE if retryable else REFUSED_TARGET) from exc


def failed(code: Any, text: Any, fallback_status: int) -> SendResult:
    """A refused send with the provider's raw code and text (the HTTP status when none)."""
    code_text = str(code) if code not in (None, "") else str(fallback_status)
    message = str(text) if text not in (None, "") else f"The provider answered {fallback_status}."
    return SendResult(provider_message_id=None, status="failed", error_code=code_text[:64],
                      error_message=message[:1000])


def as_dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}
