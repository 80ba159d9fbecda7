"""Celery tasks of the webhooks family, on the `webhooks` queue: the delivery drain.

No task carries a delivery: the deliveries table is the queue. `webhooks.drain` is kicked
after a commit that made deliveries due (the fan-out, a replay) and by the beat sweep
(`webhooks.dispatch_due`: retries come due, leases of a killed worker end, endpoints are
enabled again). Claimed rows are leased, so a worker killed in the middle loses nothing.
"""

from __future__ import annotations

from celery import shared_task

from config import queues

from . import services


@shared_task(name="webhooks.drain", ignore_result=True, queue=queues.WEBHOOKS)
def drain_deliveries() -> int:
    """Deliver every due webhook delivery; the number attempted."""
    return services.deliveries_dispatch_due()


@shared_task(name="webhooks.dispatch_due", ignore_result=True, queue=queues.WEBHOOKS)
def dispatch_due_webhook_deliveries() -> int:
    """Beat (config/beat.py): the same drain, for rows that came due with no kick."""
    return services.deliveries_dispatch_due()
