"""Account security: one-time link tokens, consent records and impersonation grants.

None of these is a TenantModel. Link tokens and consent belong to a person, who may be a
member of several organizations; impersonation grants are operator records that name the
organization they enter. Only the SHA-256 digest of a token is ever stored.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone

from platform_core.ids import PublicIdField
from platform_core.tenancy.models import Organization


class TokenPurpose(models.TextChoices):
    PASSWORD_RESET = "password_reset"
    REVOKE_API_KEYS = "revoke_api_keys"


class AccountToken(models.Model):
    """A single-use emailed link token: password reset (1 hour) or revoke API keys (24 h)."""

    id = PublicIdField(prefix="atk")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="account_tokens"
    )
    purpose = models.CharField(max_length=24, choices=TokenPurpose.choices)
    token_hash = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()
    used_at = models.DateTimeField(null=True, blank=True)
    requested_ip = models.GenericIPAddressField(null=True, blank=True)

    class Meta:
        indexes = [models.Index(fields=["user", "purpose"])]

    def __str__(self) -> str:
        return f"{self.purpose} for {self.user_id}"

    @property
    def is_usable(self) -> bool:
        return self.used_at is None and self.expires_at > timezone.now()


class ConsentRecord(models.Model):
    """A person's acceptance of the terms of service and privacy policy; one row per user,
    updated in place when they accept again (Document 1, 4.1 `/consent`)."""

    id = PublicIdField(prefix="cns")
    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="consent"
    )
    terms_version = models.CharField(max_length=64)
    privacy_version = models.CharField(max_length=64)
    locale = models.CharField(max_length=35, blank=True)
    accepted_at = models.DateTimeField()
    ip_address = models.GenericIPAddressField(null=True, blank=True)
    user_agent = models.CharField(max_length=400, blank=True)
    # The organization whose session gave the acceptance (context only, not ownership).
    organization = models.ForeignKey(
        Organization, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"consent of {self.user_id}: tos {self.terms_version}, pp {self.privacy_version}"


class ImpersonationGrant(models.Model):
    """An operator's permission to act as one member of one organization, for a reason.

    The token is opaque and random; only its digest is kept. It is exchanged once (through
    `/impersonate-exchange` or the cookie pair), which starts a session for the user that
    records the operator as impersonator. Ending the grant also ends that session.
    """

    id = PublicIdField(prefix="img")
    operator = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    operator_email = models.EmailField(help_text="Kept if the operator account is deleted.")
    organization = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="+")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    reason = models.TextField()
    token_hash = models.CharField(max_length=64, unique=True, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField(help_text="The token must be used before this moment.")
    consumed_at = models.DateTimeField(null=True, blank=True)
    consumed_via = models.CharField(max_length=16, blank=True)  # "exchange" or "cookie"
    session_id = models.CharField(max_length=40, blank=True,
                                  help_text="The impersonated session the token started.")
    ended_at = models.DateTimeField(null=True, blank=True)
    ended_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
        related_name="+",
    )

    class Meta:
        ordering = ["-created_at"]
        verbose_name = "impersonation grant"

    def __str__(self) -> str:
        return f"{self.operator_email} as {self.user_id} in {self.organization_id}"

    @property
    def status(self) -> str:
        if self.ended_at is not None:
            return "ended"
        if self.consumed_at is not None:
            return "in use"
        if self.expires_at <= timezone.now():
            return "expired"
        return "issued"
