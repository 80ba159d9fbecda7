"""A base's connector to an external content system and the pages it brought in.

Imported by `knowledge.models` (app label `knowledge`). Credentials are a JSON object
encrypted at rest (platform_core.crypto) and never serialised back out.
"""

from __future__ import annotations

import json
from typing import Any

from django.db import models

from platform_core.crypto import EncryptedTextField
from platform_core.ids import PublicIdField
from platform_core.tenancy.models import TenantModel


class ConnectorStatus(models.TextChoices):
    ACTIVE = "active"
    PAUSED = "paused"


class SyncStatus(models.TextChoices):
    NEVER = "never"
    QUEUED = "queued"
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"


class Connector(TenantModel):
    id = PublicIdField(prefix="kbc")
    knowledge_base = models.ForeignKey("knowledge.KnowledgeBase", on_delete=models.CASCADE,
                                       related_name="connectors")
    kind = models.CharField(max_length=20)  # a catalog id: confluence, notion, ...
    name = models.CharField(max_length=200)
    config = models.JSONField(default=dict, blank=True)
    credentials_encrypted = EncryptedTextField(blank=True, default="")
    status = models.CharField(max_length=8, choices=ConnectorStatus.choices,
                              default=ConnectorStatus.ACTIVE)
    # Minutes between scheduled syncs; null = only on demand.
    sync_interval_minutes = models.PositiveIntegerField(null=True, blank=True)
    next_sync_at = models.DateTimeField(null=True, blank=True)
    sync_status = models.CharField(max_length=10, choices=SyncStatus.choices,
                                   default=SyncStatus.NEVER)
    sync_started_at = models.DateTimeField(null=True, blank=True)
    last_synced_at = models.DateTimeField(null=True, blank=True)
    last_sync_error = models.CharField(max_length=500, blank=True, default="")
    last_sync_stats = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        indexes = [
            models.Index(fields=["organization", "knowledge_base", "id"]),
            # The scheduled drain: active connectors with a schedule, soonest first.
            models.Index(fields=["next_sync_at"], name="knowledge_connector_due",
                         condition=models.Q(status="active", next_sync_at__isnull=False)),
            models.Index(fields=["organization", "kind"]),
        ]

    @property
    def credentials(self) -> dict[str, Any]:
        return json.loads(self.credentials_encrypted) if self.credentials_encrypted else {}

    @credentials.setter
    def credentials(self, value: dict[str, Any] | None) -> None:
        self.credentials_encrypted = json.dumps(value, sort_keys=True) if value else ""


class ConnectorPage(TenantModel):
    """One external page and the document holding it; `content_sha256` is the hash of the
    text last brought in, so an unchanged page is neither rewritten nor re-embedded."""

    connector = models.ForeignKey(Connector, on_delete=models.CASCADE, related_name="pages")
    document = models.ForeignKey("knowledge.Document", on_delete=models.CASCADE,
                                 related_name="connector_pages")
    external_id = models.CharField(max_length=255)
    title = models.CharField(max_length=255, blank=True, default="")
    url = models.URLField(max_length=2048, blank=True, default="")
    content_sha256 = models.CharField(max_length=64)
    external_updated_at = models.CharField(max_length=40, blank=True, default="")
    synced_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["connector", "external_id"],
                                               name="knowledge_connector_page_external")]
