"""Verifications (one-time codes), verify profiles, TOTP factors and the per-organization
overrides of the verify limits (Document 2, 2.4 and 4.7; 0-conventions.md section 8).

A `Verification` (`ver_`) is one code sent to one recipient:

    pending -> sent -> verified | failed (attempts used up) | expired | canceled
    pending -> verified (sna: the network confirmed the device, no code)

`pending` is the row before its message is accepted by the messaging pipeline; a send
answers `sent`. A new send to the same recipient cancels the open one
(`cancel_reason` "superseded"). The code is never stored: `code_hash` is its keyed HMAC
(`codes.py`). `destination_prefix` feeds the fraud guard and the conversion report.
"""

from __future__ import annotations

from django.db import models
from django.utils import timezone

from platform_core.crypto import EncryptedTextField
from platform_core.ids import PublicIdField
from platform_core.tenancy.models import Organization, TenantModel, organization_key


class Status(models.TextChoices):
    PENDING = "pending"
    SENT = "sent"
    VERIFIED = "verified"
    FAILED = "failed"
    EXPIRED = "expired"
    CANCELED = "canceled"


OPEN_STATUSES = (Status.PENDING, Status.SENT)


class VerifyProfile(TenantModel):
    """Defaults of the sends that name it with `profile_id` (`/profiles`, alias `/configs`)."""

    id = PublicIdField(prefix="vpf")
    organization = organization_key(db_index=False)
    name = models.CharField(max_length=200)
    channel = models.CharField(max_length=16, default="sms")
    code_length = models.PositiveSmallIntegerField(default=6)
    max_attempts = models.PositiveSmallIntegerField(default=3)
    expiration_seconds = models.PositiveIntegerField(default=600)
    locale = models.CharField(max_length=16, default="en")
    sender = models.CharField(max_length=320, blank=True, default="")
    # Body with `{code}` (and optionally `{name}`, `{minutes}`); empty: the locale's default.
    template = models.TextField(blank=True, default="")
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        indexes = [models.Index(fields=["organization", "id"], name="verify_profile_org_id")]

    def __str__(self) -> str:
        return f"{self.name} ({self.pk})"


class Verification(TenantModel):
    id = PublicIdField(prefix="ver")
    organization = organization_key(db_index=False)
    profile = models.ForeignKey(VerifyProfile, null=True, blank=True,
                                on_delete=models.SET_NULL, related_name="+")
    to = models.CharField(max_length=320)
    channel = models.CharField(max_length=16)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    code_hash = models.CharField(max_length=64, blank=True, default="")
    code_length = models.PositiveSmallIntegerField(default=6)
    max_attempts = models.PositiveSmallIntegerField(default=3)
    attempts = models.PositiveSmallIntegerField(default=0)
    locale = models.CharField(max_length=16, default="en")
    destination_prefix = models.CharField(max_length=32, blank=True, default="")
    message_id = models.CharField(max_length=40, blank=True, default="")
    # Flashcall: the caller id whose trailing digits are the code (not secret once called).
    caller_id = models.CharField(max_length=20, blank=True, default="")
    fallback = models.JSONField(default=list, blank=True)
    cancel_reason = models.CharField(max_length=32, blank=True, default="")
    created_at = models.DateTimeField(default=timezone.now)
    expires_at = models.DateTimeField()
    sent_at = models.DateTimeField(null=True, blank=True)
    verified_at = models.DateTimeField(null=True, blank=True)
    ended_at = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        indexes = [
            # The list (keyset on id) and the tenant lookup.
            models.Index(fields=["organization", "id"], name="verify_ver_org_id"),
            # Supersede and the per-recipient limit; analytics windows by time.
            models.Index(fields=["organization", "to", "created_at"], name="verify_ver_org_to"),
            models.Index(fields=["organization", "destination_prefix", "created_at"],
                         name="verify_ver_org_prefix"),
            models.Index(fields=["organization", "created_at"], name="verify_ver_org_created"),
            # The expiry sweep reads open rows by expiry across organizations.
            models.Index(fields=["expires_at"], name="verify_ver_open_expiry",
                         condition=models.Q(status__in=OPEN_STATUSES)),
        ]
        constraints = [
            models.CheckConstraint(condition=models.Q(attempts__lte=models.F("max_attempts")),
                                   name="verify_ver_attempts_le_max"),
        ]

    def __str__(self) -> str:
        return f"{self.pk} {self.channel} {self.status}"

    @property
    def attempts_remaining(self) -> int:
        return max(self.max_attempts - self.attempts, 0)


class TotpFactor(TenantModel):
    """An authenticator-app factor of one end user (`identity`). The secret is encrypted
    at rest and shown once, at creation."""

    id = PublicIdField(prefix="vft")
    organization = organization_key(db_index=False)
    identity = models.CharField(max_length=128)
    friendly_name = models.CharField(max_length=128, blank=True, default="")
    secret = EncryptedTextField()
    status = models.CharField(max_length=16, default="unverified")  # then "verified"
    # Highest time step accepted: a code of that step or earlier is a replay.
    last_used_step = models.BigIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    verified_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [models.Index(fields=["organization", "id"], name="verify_totp_org_id")]

    def __str__(self) -> str:
        return f"{self.identity} ({self.pk})"


class VerifySettings(models.Model):
    """Per-organization overrides of the verify limits (operator console); an empty field
    keeps the deployment default of `conf.py`."""

    organization = models.OneToOneField(Organization, on_delete=models.CASCADE,
                                        primary_key=True, related_name="+")
    fraud_guard_enabled = models.BooleanField(null=True, blank=True)
    recipient_limit = models.PositiveIntegerField(null=True, blank=True)
    recipient_window_seconds = models.PositiveIntegerField(null=True, blank=True)
    prefix_limit = models.PositiveIntegerField(null=True, blank=True)
    prefix_window_seconds = models.PositiveIntegerField(null=True, blank=True)
    conversion_min_sends = models.PositiveIntegerField(null=True, blank=True)
    conversion_min_rate = models.FloatField(null=True, blank=True)
    bulk_requests_per_minute = models.PositiveIntegerField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name_plural = "verify settings"

    def __str__(self) -> str:
        return f"verify settings of {self.organization_id}"


class VerifyPrefixBucket(models.Model):
    """The fraud guard's rollup: verifications sent to (and verified at) one destination
    prefix of one organization, per `BUCKET_SECONDS` bucket of their creation time. The
    guard sums a prefix's buckets instead of counting its rows; buckets older than the
    conversion window are deleted by the expiry sweep."""

    BUCKET_SECONDS = 300

    organization = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="+",
                                     db_index=False)
    prefix = models.CharField(max_length=32)
    bucket_start = models.DateTimeField()
    sent = models.PositiveIntegerField(default=0)
    verified = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["organization", "prefix", "bucket_start"],
                                    name="verify_bucket_org_prefix_start"),
        ]
        indexes = [models.Index(fields=["bucket_start"], name="verify_bucket_start")]

    def __str__(self) -> str:
        return f"{self.organization_id} {self.prefix} {self.bucket_start:%Y-%m-%d %H:%M}"
