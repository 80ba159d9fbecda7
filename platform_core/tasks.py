"""Periodic jobs of the platform core."""

from __future__ import annotations

from datetime import timedelta

from celery import shared_task
from django.conf import settings
from django.utils import timezone

from platform_core.api.models import IdempotencyRecord


@shared_task
def purge_idempotency_records() -> int:
    """Forget idempotent answers older than their 24-hour window."""
    cutoff = timezone.now() - timedelta(seconds=settings.IDEMPOTENCY_TTL_SECONDS)
    deleted, _ = (
        IdempotencyRecord.objects.dangerously_unscoped().filter(created_at__lt=cutoff).delete()
    )
    return deleted
