"""Celery tasks of the event bus: the fan-out drain, its sweep and the outbox purge.

All run on the `events` queue (config/queues.py). None carries an event: the outbox is
the queue, a task only says "drain it".
"""

from __future__ import annotations

import logging
from datetime import timedelta

from celery import shared_task
from django.utils import timezone

from config import queues

from . import bus, conf
from .models import Event

logger = logging.getLogger("platform_core.events")


@shared_task(name="events.drain", ignore_result=True, queue=queues.EVENTS)
def drain_events() -> int:
    """Fan out every committed, undispatched event (kicked after each commit)."""
    return bus.drain()


@shared_task(name="events.redispatch_pending", ignore_result=True, queue=queues.EVENTS)
def redispatch_pending() -> int:
    """Beat (config/beat.py): fan out events committed but not dispatched after a grace
    period — a crash between commit and fan-out, a broker outage at kick time, handlers
    that failed (those wait for their backoff, `next_dispatch_at`). An event is given up
    after the attempt limit or once older than the horizon."""
    count = bus.drain(older_than=timedelta(seconds=conf.redispatch_after_seconds()))
    if count:
        logger.info("re-dispatched %d events", count)
    return count


PURGE_BATCH = 5000


@shared_task(name="events.purge_outbox", ignore_result=True, queue=queues.EVENTS)
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
