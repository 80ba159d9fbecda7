"""Background work of recordings: fetch registered media, the retention sweep (beat)."""

from __future__ import annotations

from celery import shared_task

from platform_core.tenancy.context import tenant_context


@shared_task(name="recordings.fetch_media")
def fetch_recording_media(recording_id: str) -> str:
    from . import services
    from .models import Recording

    recording = Recording.objects.dangerously_unscoped().select_related(
        "organization").filter(pk=recording_id).first()
    if recording is None:
        return "gone"
    with tenant_context(recording.organization):
        return services.recording_fetch_media(recording).status


@shared_task(name="recordings.retention_sweep")
def retention_sweep() -> int:
    from . import services

    return services.retention_sweep()
