"""Celery tasks of the event bus: the fan-out and the re-dispatch scan (config/beat.py)."""

from __future__ import annotations

import logging
from datetime import timedelta

from celery import shared_task
from django.db.models import Q
from django.utils import timezone

from . import bus, conf
from .models import Event

logger = logging.getLogger("platform_core.events")

REDISPATCH_BATCH = 500
# Events older than this are not re-dispatched any more (the scan stays bounded).
REDISPATCH_HORIZON = timedelta(days=3)


@shared_task(name="events.dispatch_event", ignore_result=True)
def dispatch_event(event_id: str) -> bool:
    """Fan out one committed event to every registered handler."""
    return bus.dispatch(event_id)


@shared_task(name="events.redispatch_pending", ignore_result=True)
def redispatch_pending() -> int:
    """Re-dispatch events committed but not fanned out after a grace period.

    Covers a crash between commit and fan-out, a broker outage at enqueue time, and
    handlers that failed (those wait for their backoff, `next_dispatch_at`). An event is
    given up after the attempt limit or once older than the horizon.
    """
    now = timezone.now()
    pending = (
        Event.objects.dangerously_unscoped()
        .filter(
            dispatched_at__isnull=True,
            created_at__lte=now - timedelta(seconds=conf.redispatch_after_seconds()),
            created_at__gte=now - REDISPATCH_HORIZON,
            dispatch_attempts__lt=conf.max_dispatch_attempts(),
        )
        .filter(Q(next_dispatch_at__isnull=True) | Q(next_dispatch_at__lte=now))
        .order_by("created_at")
        .values_list("pk", flat=True)[:REDISPATCH_BATCH]
    )
    count = 0
    for event_id in pending:
        bus.enqueue_dispatch(event_id)
        count += 1
    if count:
        logger.info("re-dispatched %d events", count)
    return count


PURGE_BATCH = 5000


@shared_task(name="events.purge_outbox", ignore_result=True)
def purge_outbox() -> int:
    """Delete outbox rows older than `EVENTS_OUTBOX_RETENTION_DAYS` (30) in batches.

    The outbox is not history: the feed keeps minutes, webhook deliveries keep their own
    payload for replay, and nothing else points at an event row.
    """
    cutoff = timezone.now() - timedelta(days=conf.outbox_retention_days())
    rows = Event.objects.dangerously_unscoped().filter(created_at__lt=cutoff)
    deleted = 0
    while True:
        batch = list(rows.values_list("pk", flat=True)[:PURGE_BATCH])
        if not batch:
            return deleted
        deleted += Event.objects.dangerously_unscoped().filter(pk__in=batch).delete()[0]
