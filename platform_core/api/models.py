"""Storage behind the API conventions: idempotent answers."""

from __future__ import annotations

from django.db import models

from platform_core.tenancy.models import TenantModel


class IdempotencyRecord(TenantModel):
    """The first answer to a POST carrying `Idempotency-Key`, replayed for 24 hours."""

    key = models.CharField(max_length=255)
    fingerprint = models.CharField(max_length=64)
    status_code = models.PositiveSmallIntegerField(null=True)
    content_type = models.CharField(max_length=100, blank=True)
    body = models.BinaryField(null=True)
    headers = models.JSONField(default=dict)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["organization", "key"], name="uniq_idempotency_key")
        ]
