"""Call and video recordings (Document 3, 2.4 and 4.6; 0-conventions section 9).

The media bytes live encrypted in Django's default storage (the same storage as
platform_core/files): one data key per recording, wrapped by the key provider
(`recordings/keys.py`). Seals form one hash chain per organization (`chain.py`).
"""

from __future__ import annotations

import secrets

from django.db import models
from django.utils import timezone

from platform_core.ids import PublicIdField
from platform_core.tenancy.models import Organization, TenantModel


def new_nonce() -> str:
    return secrets.token_hex(16)


class RecordingKind(models.TextChoices):
    CALL = "call"
    VIDEO = "video"


class RecordingStatus(models.TextChoices):
    PROCESSING = "processing"  # a `media_url` registration whose media is being fetched
    COMPLETED = "completed"
    FAILED = "failed"


class Recording(TenantModel):
    id = PublicIdField(prefix="rec")
    kind = models.CharField(max_length=8, choices=RecordingKind.choices)
    status = models.CharField(max_length=12, choices=RecordingStatus.choices,
                              default=RecordingStatus.COMPLETED)
    source = models.CharField(max_length=8, default="upload")  # upload | url
    media_url = models.CharField(max_length=2048, blank=True, default="")
    filename = models.CharField(max_length=255, blank=True, default="")
    content_type = models.CharField(max_length=255, blank=True, default="")
    size = models.BigIntegerField(null=True, blank=True)
    content_sha256 = models.CharField(max_length=64, blank=True, default="")
    duration_seconds = models.PositiveIntegerField(null=True, blank=True)
    # The video room / call this recording belongs to: a legal hold on one recording of
    # a session keeps every artefact of that session (Document 3, 4.6).
    session_id = models.CharField(max_length=128, blank=True, default="")
    call_sid = models.CharField(max_length=128, blank=True, default="")
    metadata = models.JSONField(default=dict, blank=True)
    failure_reason = models.CharField(max_length=500, blank=True, default="")
    # Encrypted media (envelope encryption); `key_ref` and `wrapped_key` are never returned.
    storage_name = models.CharField(max_length=500, blank=True, default="")
    wrapped_key = models.TextField(blank=True, default="")
    key_ref = models.CharField(max_length=500, blank=True, default="")
    kms_provider = models.CharField(max_length=32, blank=True, default="")
    kms_key_fingerprint = models.CharField(max_length=64, blank=True, default="")
    encryption_algorithm = models.CharField(max_length=64, blank=True, default="")
    # Legal hold.
    legal_hold = models.BooleanField(default=False)
    legal_hold_reason = models.CharField(max_length=512, blank=True, default="")
    legal_hold_updated_by = models.CharField(max_length=64, blank=True, default="")
    legal_hold_updated_at = models.DateTimeField(null=True, blank=True)
    # Guest links: rotating the nonce revokes every link handed out.
    share_nonce = models.CharField(max_length=32, default=new_nonce)
    created_by = models.CharField(max_length=64, blank=True, default="")
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-id"]
        indexes = [
            models.Index(fields=["organization", "id"]),
            models.Index(fields=["organization", "kind", "id"]),
            models.Index(fields=["organization", "session_id"]),
            # The retention sweep: oldest unheld first.
            models.Index(fields=["legal_hold", "created_at"]),
        ]

    def __str__(self) -> str:
        return self.id

    @property
    def has_media(self) -> bool:
        return bool(self.storage_name)


class RecordingChain(models.Model):
    """The head of an organization's seal chain; its row lock serialises sealing."""

    organization = models.OneToOneField(Organization, on_delete=models.CASCADE,
                                        related_name="+", primary_key=True)
    length = models.PositiveIntegerField(default=0)
    head_hash = models.CharField(max_length=64)

    def __str__(self) -> str:
        return f"chain of {self.organization_id} ({self.length})"


class RecordingSeal(TenantModel):
    """One link of the chain. Kept when the recording is swept, so the chain stays whole."""

    recording = models.OneToOneField(Recording, on_delete=models.SET_NULL, null=True,
                                     blank=True, related_name="seal")
    recording_ref = models.CharField(max_length=40)
    sequence = models.PositiveIntegerField()
    content_sha256 = models.CharField(max_length=64)
    prev_hash = models.CharField(max_length=64)
    current_hash = models.CharField(max_length=64)
    canonicalization_version = models.CharField(max_length=16)
    kms_provider = models.CharField(max_length=32, blank=True, default="")
    kms_key_fingerprint = models.CharField(max_length=64, blank=True, default="")
    encryption_algorithm = models.CharField(max_length=64, blank=True, default="")
    sealed_by = models.CharField(max_length=64, blank=True, default="")
    sealed_at = models.DateTimeField()

    class Meta:
        ordering = ["sequence"]
        constraints = [models.UniqueConstraint(fields=["organization", "sequence"],
                                               name="recording_seal_sequence_unique")]

    def __str__(self) -> str:
        return f"seal {self.sequence} of {self.recording_ref}"
