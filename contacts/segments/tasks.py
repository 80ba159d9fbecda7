"""Celery tasks of the segments family: the periodic refresh (config/beat.py)."""

from __future__ import annotations

import logging
from datetime import timedelta

from celery import shared_task
from django.conf import settings

from . import services

logger = logging.getLogger("contacts.segments")

REFRESH_BATCH = 500


def refresh_interval() -> timedelta:
    """How old a rule-defined segment's membership may grow before the job redoes it."""
    return timedelta(seconds=getattr(settings, "SEGMENTS_REFRESH_INTERVAL_SECONDS", 900))


@shared_task(name="segments.refresh_segment", ignore_result=True)
def refresh_segment(segment_id: str) -> int | None:
    return services.segment_refresh(segment_id=segment_id)


@shared_task(name="segments.refresh_stale", ignore_result=True)
def refresh_stale() -> int:
    """Queue a refresh of every rule-defined segment older than the interval, stalest
    first. Click cohorts are never picked: their membership is a point in time."""
    ids = services.stale_segment_ids(older_than=refresh_interval(), limit=REFRESH_BATCH)
    for segment_id in ids:
        refresh_segment.delay(segment_id)
    if ids:
        logger.info("queued the refresh of %d segments", len(ids))
    return len(ids)
