"""Background work of the ads integration."""

from __future__ import annotations

from celery import shared_task


@shared_task(name="ads.retry_pending_leads")
def retry_pending_leads() -> int:
    from . import services

    return services.retry_pending_leads()
