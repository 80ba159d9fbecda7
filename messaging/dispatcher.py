"""From accepted to sent: the messages table is the outbox, a batch dispatcher drains it.

`message_send` only inserts the message (`queued`, or `scheduled` with `send_at`) with
`announced_at` unset: one statement, no broker round trip in the request. After commit
it calls `kick()`. The dispatcher (`dispatch_accepted`, task `messaging.dispatch_accepted`)
claims unannounced messages in batches under SKIP LOCKED, emits each one's
`message.queued` / `message.scheduled` event (with its status callback), marks them
announced and queues the send task of each queued one. A status change that reaches a
message before the dispatcher does announces it first (`services._transition`), so the
events of a message always start with its acceptance.

`kick()` costs the request a `threading.Event.set()`: a daemon thread per process turns
kicks into at most one queued dispatcher for the deployment. It sets a Redis flag with
SET NX and queues the task only when it set it; the dispatcher deletes the flag before
every claim and stops only after a claim found nothing, so a message committed before a
kick that found the flag set is always claimed by the dispatcher that set it. Without a
shared cache (the embedded default) every kick queues the task; with Celery eager (tests)
the dispatcher runs right away. A kick lost with a dying process is made up by the beat
sweep (`messages_dispatch_due`), which runs the dispatcher too.
"""

from __future__ import annotations

import logging
import os
import threading
import time

from django.conf import settings
from django.core.cache import cache
from django.db import transaction
from django.utils import timezone

from platform_core.shared_cache import is_shared
from platform_core.tenancy.context import tenant_context

from .models import Message, MessageStatus

logger = logging.getLogger("messaging")

PENDING_FLAG = "messaging:dispatch:pending"
FLAG_TTL_SECONDS = 60  # a dispatcher lost before it ran is re-queued after this at worst
BATCH = 500
COALESCE_SECONDS = 0.02  # at most one flag check per process per 20 ms (added latency)

_kicker_lock = threading.Lock()
_kicker: _Kicker | None = None


def _queue_dispatcher() -> None:
    from .tasks import dispatch_accepted as task

    if is_shared() and not cache.add(PENDING_FLAG, 1, timeout=FLAG_TTL_SECONDS):
        return  # queued or running: it claims after deleting the flag, so it sees ours
    try:
        task.delay()
    except Exception:
        logger.exception("could not queue the message dispatcher; the sweep will run it")
        if is_shared():
            cache.delete(PENDING_FLAG)


class _Kicker:
    """One daemon thread per process that turns kicks into `_queue_dispatcher()` calls."""

    def __init__(self) -> None:
        self.pid = os.getpid()
        self.wanted = threading.Event()
        threading.Thread(target=self._run, name="messaging-dispatch-kicker", daemon=True).start()

    def _run(self) -> None:
        while True:
            self.wanted.wait()
            self.wanted.clear()
            try:
                _queue_dispatcher()
            except Exception:  # the sweep makes up for it; keep the thread alive
                logger.exception("dispatch kick failed")
            time.sleep(COALESCE_SECONDS)


def kick() -> None:
    """Make sure a dispatcher will claim what was committed before this call."""
    if getattr(settings, "CELERY_TASK_ALWAYS_EAGER", False):
        from .tasks import dispatch_accepted as task

        task.delay()
        return
    global _kicker
    kicker = _kicker
    if kicker is None or kicker.pid != os.getpid():  # first use, or a forked child
        with _kicker_lock:
            if _kicker is None or _kicker.pid != os.getpid():
                _kicker = _Kicker()
            kicker = _kicker
    kicker.wanted.set()


def dispatch_accepted(*, batch: int = BATCH) -> int:
    """Announce every accepted message and queue the sends; the number announced."""
    from .services import announce, queue_send

    total = 0
    while True:
        if is_shared():
            cache.delete(PENDING_FLAG)  # before the claim: a later kick queues a new run
        with transaction.atomic():
            claimed = list(
                Message.objects.dangerously_unscoped()
                .select_for_update(skip_locked=True, of=("self",))
                .select_related("organization")
                .filter(announced_at__isnull=True)
                .order_by("pk")[:batch]
            )
            if not claimed:
                return total
            for message in claimed:
                with tenant_context(message.organization):
                    announce(message)
            Message.objects.dangerously_unscoped().filter(
                pk__in=[m.pk for m in claimed]).update(announced_at=timezone.now())
            for message in claimed:
                if message.status == MessageStatus.QUEUED and message.dispatched_at is None:
                    queue_send(message.pk)
        total += len(claimed)
