"""Provider accounts: an organization's credentials for one live channel provider.

A `ProviderAccount` (`pac_`) says which adapter sends the organization's live messages on
a channel (`twilio` for sms / mms / voice / flashcall, `whatsapp_cloud`, `rcs_business`, `smtp`
for email, `vonage` for viber, `telegram_gateway` for telegram) with the organization's own credentials, encrypted at rest (MultiFernet, see
`platform_core.crypto`) and never returned by the API. One account per (organization,
channel); an account kept for `sms` also serves the other channels its adapter speaks
(the registry's rule), so one Twilio account sends sms, mms and voice.

`base_url` overrides the provider's public API address (tests point it at a loopback
server); outside development it must be a public https address.
"""

from __future__ import annotations

import json
from typing import Any

from django.db import models
from django.utils import timezone

from platform_core.crypto import EncryptedTextField
from platform_core.ids import PublicIdField
from platform_core.tenancy.models import TenantModel


class AccountChannel(models.TextChoices):
    SMS = "sms"
    MMS = "mms"
    WHATSAPP = "whatsapp"
    RCS = "rcs"
    EMAIL = "email"
    VOICE = "voice"
    VIBER = "viber"
    TELEGRAM = "telegram"
    FLASHCALL = "flashcall"


class ProviderName(models.TextChoices):
    TWILIO = "twilio", "Twilio"
    WHATSAPP_CLOUD = "whatsapp_cloud", "WhatsApp Cloud API"
    RCS_BUSINESS = "rcs_business", "RCS Business Messaging"
    SMTP = "smtp", "SMTP"
    VONAGE = "vonage", "Vonage Messages API (Viber)"
    TELEGRAM_GATEWAY = "telegram_gateway", "Telegram Gateway"


# The channels each adapter can send on (an account's channel must be one of them).
PROVIDER_CHANNELS: dict[str, frozenset[str]] = {
    ProviderName.TWILIO: frozenset({"sms", "mms", "voice", "flashcall"}),
    ProviderName.WHATSAPP_CLOUD: frozenset({"whatsapp"}),
    ProviderName.RCS_BUSINESS: frozenset({"rcs"}),
    ProviderName.SMTP: frozenset({"email"}),
    ProviderName.VONAGE: frozenset({"viber"}),
    ProviderName.TELEGRAM_GATEWAY: frozenset({"telegram"}),
}


class ProviderAccount(TenantModel):
    id = PublicIdField(prefix="pac")
    channel = models.CharField(max_length=16, choices=AccountChannel.choices)
    provider = models.CharField(max_length=32, choices=ProviderName.choices)
    # JSON object of secrets (auth tokens, access tokens, SMTP password), encrypted.
    credentials_encrypted = EncryptedTextField(blank=True, default="")
    # Non-secret settings: account SID, phone number id, agent id, SMTP host and port...
    config = models.JSONField(default=dict, blank=True)
    base_url = models.URLField(max_length=2048, blank=True, default="")
    enabled = models.BooleanField(default=True)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["organization", "channel"],
                                    name="providers_account_org_channel"),
        ]
        indexes = [models.Index(fields=["organization", "id"], name="providers_account_org_id")]

    def __str__(self) -> str:
        return f"{self.pk} {self.provider} for {self.channel}"

    @property
    def credentials(self) -> dict[str, Any]:
        return json.loads(self.credentials_encrypted) if self.credentials_encrypted else {}

    @credentials.setter
    def credentials(self, value: dict[str, Any] | None) -> None:
        self.credentials_encrypted = json.dumps(value, sort_keys=True) if value else ""

    @property
    def credentials_configured(self) -> bool:
        return bool(self.credentials_encrypted)

    def setting(self, name: str, default: Any = None) -> Any:
        """A config value, falling back to a same-named credential (and `default`)."""
        value = (self.config or {}).get(name)
        if value in (None, ""):
            value = self.credentials.get(name)
        return default if value in (None, "") else value
