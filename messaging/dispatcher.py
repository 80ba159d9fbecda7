"""From accepted to sent: the messages table is the outbox, a batch dispatcher drains it.

`message_send` only inserts the message (`queued`, or `scheduled` with `send_at`) with
`announced_at` unset: one statement, no broker round trip in the request. After commit
it calls `kick()`. The dispatcher (`dispatch_accepted`, task `messaging.dispatch_accepted`
on the `sends` queue) runs the send drain (messaging/sending/drain.py) until it finds
nothing: each claim announces the accepted messages (`message.queued` /
`message.scheduled`, with their status callbacks) and claims the queued ones, then the
batch is sent and written back. A status change that reaches a message before the
dispatcher does announces it first (`status.StatusBatch.announce`), so the events of a
message always start with its acceptance.

The batch size adapts to the backlog: a run claims 1 message first, then four times more
after each full claim (up to MESSAGING_SEND_BATCH_MAX, 256): an idle system sends a lone
message at once, a backlog goes out hundreds at a time. After each full claim the run
kicks once more, so another worker process (if one is free) joins the drain.

`kick()` costs the request a `threading.Event.set()`: a daemon thread per process turns
kicks into at most one queued dispatcher for the deployment. It sets a Redis flag with
SET NX and queues the task only when it set it; the dispatcher deletes the flag before
every claim and stops only after a claim that was not full (it took every row it could
see), so a message committed before a kick that found the flag set is always claimed by
the dispatcher that set it. Without a
shared cache (the embedded default) every kick queues the task; with Celery eager (tests)
the dispatcher runs right away. A kick lost with a dying process is made up by the timed
drain (messaging/timed.py, beat), which runs the dispatcher too.
"""

from __future__ import annotations

import logging
import os
import threading
import time

from django.conf import settings
from django.core.cache import cache

from platform_core.shared_cache import is_shared

logger = logging.getLogger("messaging")

PENDING_FLAG = "messaging:dispatch:pending"
FLAG_TTL_SECONDS = 60  # a dispatcher lost before it ran is re-queued after this at worst
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

        try:
            task.delay()
        except Exception:
            logger.exception("could not run the message dispatcher; the sweep will run it")
        return
    global _kicker
    kicker = _kicker
    if kicker is None or kicker.pid != os.getpid():  # first use, or a forked child
        with _kicker_lock:
            if _kicker is None or _kicker.pid != os.getpid():
                _kicker = _Kicker()
            kicker = _kicker
    kicker.wanted.set()


def dispatch_accepted(*, batch: int | None = None) -> int:
    """Announce and send accepted messages until none is left; the number handled."""
    from .sending import drain

    largest = batch or drain.batch_max()
    size, total = 1, 0
    while True:
        if is_shared():
            cache.delete(PENDING_FLAG)  # before the claim: a later kick queues a new run
        claimed = drain.claim(size)
        if not claimed.handled:
            return total
        drain.send(claimed.to_send)
        total += claimed.handled
        if claimed.handled < size:
            return total  # it took every claimable row: the backlog is drained
        size = min(size * 4, largest)
        if not getattr(settings, "CELERY_TASK_ALWAYS_EAGER", False):
            _queue_dispatcher()  # a backlog: another worker may join
