"""Advertising integration (Document 3, 2.5b and 4.9): one ad account per organization,
click-to-chat campaigns, customer-list audiences, ingested leads."""

from __future__ import annotations

from django.db import models
from django.utils import timezone

from platform_core.crypto import EncryptedTextField
from platform_core.ids import PublicIdField
from platform_core.tenancy.models import TenantModel


class AdAccount(TenantModel):
    ad_account_id = models.CharField(max_length=64)
    access_token = EncryptedTextField()  # never returned
    name = models.CharField(max_length=255, blank=True, default="")
    currency = models.CharField(max_length=3, blank=True, default="")
    account_status = models.CharField(max_length=32, blank=True, default="")
    dataset_id = models.CharField(max_length=64, blank=True, default="")
    connected_via = models.CharField(max_length=8)  # oauth | token
    connected_by = models.CharField(max_length=64, blank=True, default="")
    connected_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["organization"],
                                               name="ads_one_account_per_organization")]

    def __str__(self) -> str:
        return f"act_{self.ad_account_id}"


class CampaignChannel(models.TextChoices):
    WHATSAPP = "whatsapp"
    MESSENGER = "messenger"
    INSTAGRAM = "instagram"


class SyncMode(models.TextChoices):
    ADD = "add"
    REMOVE = "remove"


class AdCampaign(TenantModel):
    id = PublicIdField(prefix="adc")
    name = models.CharField(max_length=200)
    channel = models.CharField(max_length=16, choices=CampaignChannel.choices)
    status = models.CharField(max_length=16, default="paused")  # paused | active
    daily_budget = models.PositiveBigIntegerField(help_text="Minor units of the currency.")
    external_id = models.CharField(max_length=64)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-id"]
        indexes = [models.Index(fields=["organization", "id"])]

    def __str__(self) -> str:
        return self.name


class AdAudience(TenantModel):
    id = PublicIdField(prefix="aud")
    name = models.CharField(max_length=200)
    segment_id = models.CharField(max_length=40)
    external_id = models.CharField(max_length=64)
    last_synced_at = models.DateTimeField(null=True, blank=True)
    last_sync = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-id"]
        indexes = [models.Index(fields=["organization", "id"])]

    def __str__(self) -> str:
        return self.name


class AdLead(TenantModel):
    """One lead of a lead-webhook batch; `pending` ones are fetched again by beat."""

    leadgen_id = models.CharField(max_length=64)
    form_id = models.CharField(max_length=64, blank=True, default="")
    status = models.CharField(max_length=16)  # ingested | pending | no_contact
    contact_id = models.CharField(max_length=40, blank=True, default="")
    attempts = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["organization", "leadgen_id"],
                                               name="ads_lead_unique")]
        indexes = [models.Index(fields=["status", "updated_at"])]

    def __str__(self) -> str:
        return self.leadgen_id
