"""Writes of provider accounts: create or replace one per channel, delete. Audited.

Credentials are validated per provider, stored encrypted and never echoed; a replace that
omits `credentials` keeps the stored ones when the provider stays the same.
"""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.db import IntegrityError, transaction

from platform_core.audit.services import audit_record
from platform_core.errors import APIError, validation_error
from platform_core.identity.principal import Principal
from platform_core.net import ssrf

from .models import PROVIDER_CHANNELS, ProviderAccount, ProviderName

MAX_CREDENTIALS_BYTES = 16 * 1024
MAX_CONFIG_BYTES = 16 * 1024

# Per provider: config keys that must be present, credential alternatives (one group of
# keys must all be present), and config keys that must be strings / integers / booleans.
_RULES: dict[str, dict[str, Any]] = {
    ProviderName.TWILIO: {
        "config": ("account_sid",),
        "credentials": (("auth_token",), ("api_key_sid", "api_key_secret")),
    },
    ProviderName.WHATSAPP_CLOUD: {
        "config": ("phone_number_id",),
        "credentials": (("access_token",),),
    },
    ProviderName.RCS_BUSINESS: {
        "config": ("agent_id",),
        "credentials": (("access_token",), ("service_account",)),
    },
    ProviderName.SMTP: {
        "config": ("host",),
        "credentials": ((),),  # a relay may accept mail without authentication
    },
    ProviderName.VONAGE: {
        "config": ("from",),  # the Viber service id
        "credentials": (("api_key", "api_secret"),),
    },
    ProviderName.TELEGRAM_GATEWAY: {
        "config": (),
        "credentials": (("access_token",),),
    },
}
_STRING_KEYS = frozenset({"account_sid", "from", "messaging_service_sid", "voice",
                          "status_callback_url", "phone_number_id", "waba_id", "api_version",
                          "agent_id", "host", "username", "flashcall_prefix",
                          "sender_username"})
_INT_KEYS = frozenset({"port", "timeout"})
_BOOL_KEYS = frozenset({"use_tls", "use_ssl"})


def _validate_config(provider: str, config: dict[str, Any]) -> dict[str, Any]:
    if len(json.dumps(config)) > MAX_CONFIG_BYTES:
        raise validation_error("config", "The config is too large.")
    for key in _RULES[provider]["config"]:
        if config.get(key) in (None, ""):
            raise validation_error(f"config.{key}", f"The {provider} provider needs `{key}`.")
    for key, value in config.items():
        if key in _STRING_KEYS and not isinstance(value, str):
            raise validation_error(f"config.{key}", "Must be a string.")
        if key in _INT_KEYS and (isinstance(value, bool) or not isinstance(value, int)
                                 or not 0 < value < 65536):
            raise validation_error(f"config.{key}", "Must be a positive integer.")
        if key in _BOOL_KEYS and not isinstance(value, bool):
            raise validation_error(f"config.{key}", "Must be true or false.")
    if config.get("flashcall_prefix") and not re.fullmatch(r"\+[1-9][0-9]{3,10}",
                                                           config["flashcall_prefix"]):
        raise validation_error("config.flashcall_prefix", "A caller id prefix: + and 4-11 "
                                                          "digits (the code completes it).")
    if config.get("use_tls") and config.get("use_ssl"):
        raise validation_error("config.use_ssl", "use_tls and use_ssl exclude each other.")
    if provider == ProviderName.SMTP:
        _check_smtp_host(config["host"], int(config.get("port") or 587))
    if config.get("status_callback_url"):
        # The provider calls it, not this platform: only its form is checked.
        _check_url("config.status_callback_url", config["status_callback_url"], resolve=False)
    return config


def _validate_credentials(provider: str, credentials: dict[str, Any]) -> dict[str, Any]:
    if len(json.dumps(credentials)) > MAX_CREDENTIALS_BYTES:
        raise validation_error("credentials", "The credentials are too large.")
    for key, value in credentials.items():
        if key == "service_account" and isinstance(value, dict | str):
            continue
        if not isinstance(value, str):
            raise validation_error(f"credentials.{key}", "Must be a string.")
    groups = _RULES[provider]["credentials"]
    if not any(all(credentials.get(k) for k in group) for group in groups):
        wanted = " or ".join("+".join(g) for g in groups if g)
        raise validation_error("credentials", f"The {provider} provider needs {wanted}.")
    if provider == ProviderName.RCS_BUSINESS and not credentials.get("access_token"):
        key = credentials["service_account"]
        if isinstance(key, str):
            try:
                key = json.loads(key)
            except ValueError:
                raise validation_error("credentials.service_account",
                                       "Must be the service account's JSON key.") from None
        if not isinstance(key, dict) or not key.get("client_email") or not key.get(
                "private_key"):
            raise validation_error("credentials.service_account",
                                   "The key needs client_email and private_key.")
        if key.get("token_uri"):
            _check_url("credentials.service_account.token_uri", key["token_uri"])
    return credentials


def _check_url(field: str, url: str, *, resolve: bool = True) -> None:
    """https and public outside development; ALLOW_PRIVATE_WEBHOOK_TARGETS allows http/loopback."""
    if not isinstance(url, str) or len(url) > 2048:
        raise validation_error(field, "Must be a URL of at most 2048 characters.")
    parts = urlsplit(url)
    allow_private = settings.ALLOW_PRIVATE_WEBHOOK_TARGETS
    if parts.scheme not in ("https", "http") or not parts.hostname:
        raise validation_error(field, "Must be an absolute http(s) URL.")
    if not allow_private and parts.scheme != "https":
        raise validation_error(field, "The URL must use https.")
    if not resolve:
        return
    try:
        ssrf.check_url(url)
    except ssrf.UnsafeTarget as exc:
        raise validation_error(field, f"The URL is not an allowed target: {exc}.") from None


def _check_smtp_host(host: str, port: int) -> None:
    try:
        ssrf.check_url(f"smtp://{host}:{port}", schemes=("smtp",))
    except ssrf.UnsafeTarget as exc:
        raise validation_error("config.host", f"The host is not an allowed target: {exc}.") \
            from None


def provider_account_put(
    *,
    organization,
    channel: str,
    provider: str,
    credentials: dict[str, Any] | None,
    config: dict[str, Any] | None = None,
    base_url: str | None = None,
    enabled: bool = True,
    principal: Principal | None = None,
    request=None,
) -> tuple[ProviderAccount, bool]:
    """Create or replace the organization's account for `channel`; (account, created)."""
    if channel not in PROVIDER_CHANNELS.get(provider, ()):
        served = sorted(PROVIDER_CHANNELS.get(provider, ()))
        raise validation_error(
            "provider", f"The {provider} provider does not send on the {channel} channel"
            + (f" (it sends {', '.join(served)})." if served else "."))
    config = _validate_config(provider, dict(config or {}))
    if base_url:
        _check_url("base_url", base_url)
    with transaction.atomic():
        account = (ProviderAccount.objects.for_organization(organization)
                   .select_for_update().filter(channel=channel).first())
        created = account is None
        if credentials is None and (created or account.provider != provider):
            if () not in _RULES[provider]["credentials"]:
                raise validation_error("credentials", "Give the provider's credentials.")
            credentials = {}
        if credentials is None:
            _validate_credentials(provider, account.credentials)
        else:
            _validate_credentials(provider, credentials)
        if created:
            account = ProviderAccount(organization=organization, channel=channel)
        previous_provider = None if created else account.provider
        account.provider = provider
        account.config = config
        account.base_url = base_url or ""
        account.enabled = enabled
        if credentials is not None:
            account.credentials = credentials
        try:
            with transaction.atomic():
                account.save()
        except IntegrityError:
            raise APIError("CONFLICT", "The account for this channel changed at the same time; "
                           "retry.") from None
        audit_record(
            action="provider_account.created" if created else "provider_account.updated",
            organization=organization, principal=principal, target=account, request=request,
            metadata={"channel": channel, "provider": provider, "enabled": enabled,
                      "previous_provider": previous_provider,
                      "credentials_changed": credentials is not None},
        )
    return account, created


def provider_account_delete(*, account: ProviderAccount, principal: Principal | None = None,
                            request=None) -> None:
    with transaction.atomic():
        audit_record(action="provider_account.deleted", organization=account.organization,
                     principal=principal, target=account, request=request,
                     metadata={"channel": account.channel, "provider": account.provider})
        account.delete()

