"""Celery tasks of messaging. They take ids (or nothing: "drain") and call services.

- `messaging.dispatch_accepted` (queue `sends`): the send drain, kicked after each API send
  (messaging/dispatcher.py): claims, announces and sends accepted messages in batches.
- `messaging.dispatch_due` (queue `sends`; beat, config/beat.py, and woken for earlier due
  times by `timed.arm`): the timed drain, messaging/timed.py (scheduled sends, retries,
  sandbox receipts, no-receipt fallbacks, claims of a killed worker).
- `messaging.deliver_callback` (queue `webhooks`): the drain of owed status callbacks /
  inbound webhook POSTs (callbacks.py); kicked after commit, swept by beat.
"""

from __future__ import annotations

import logging

from celery import shared_task

from config import queues

from . import callbacks, dispatcher, timed

logger = logging.getLogger("messaging")


@shared_task(name="messaging.deliver_callback", ignore_result=True, queue=queues.WEBHOOKS)
def deliver_callback() -> int:
    """The status-callback drain: send every due callback (callbacks.py), kicked after
    the commit that owes them and swept by beat for retries; the number attempted."""
    return callbacks.callbacks_deliver_due()


@shared_task(name="messaging.dispatch_accepted", ignore_result=True, queue=queues.SENDS)
def dispatch_accepted() -> int:
    """Announce accepted messages and send them in batches (messaging/dispatcher.py)."""
    return dispatcher.dispatch_accepted()


@shared_task(name="messaging.dispatch_due", ignore_result=True, queue=queues.SENDS)
def dispatch_due() -> dict[str, int]:
    return timed.messages_dispatch_due()


# Broadcasts' tasks live with their family; importing them here registers them with the
# worker (Celery discovers `messaging.tasks`).
from .broadcasts import tasks as _broadcast_tasks  # noqa: E402,F401
