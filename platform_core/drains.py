"""Coalesced "drain" signals: wake the worker that empties a table-backed queue.

The background plane keeps its work in tables (the event outbox, webhook deliveries,
status callbacks); a Celery task carries no row, only the news that a table has work.
`DrainSignal.kick()` is what a committed write calls; it costs the caller a
`threading.Event.set()`. A daemon thread per process turns a burst of kicks into at most
one queued drain task for the deployment: it sets a Redis flag with SET NX and queues the
task only when it set the flag. The drain deletes the flag (`clear()`) before every claim
and stops only after a claim found nothing, so a row committed before a kick that found
the flag set is claimed by the drain that set it. Without a shared cache every kick queues
the task; with Celery eager (tests) the drain runs at once in the caller. A kick lost
with a dying process is made up by the drain's periodic sweep (config/beat.py).

This is the pattern of messaging/dispatcher.py's kicker, written once for any drain.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable

from django.conf import settings
from django.core.cache import cache

from platform_core.shared_cache import is_shared

logger = logging.getLogger("platform_core.drains")

FLAG_TTL_SECONDS = 5  # a drain lost before it ran (a purged broker...) is queued again after this
COALESCE_SECONDS = 0.005  # after queueing, kicks of the next 5 ms ride along


class DrainSignal:
    """One drain: its Redis flag and the Celery task (looked up lazily) it queues."""

    def __init__(self, name: str, task: Callable[[], object]) -> None:
        self.name = name
        self.flag = f"drain:{name}:pending"
        self._task = task  # returns the Celery task object (import cycles stay lazy)
        self._lock = threading.Lock()
        self._pid: int | None = None
        self._wanted = threading.Event()

    def kick(self) -> None:
        """Make sure a drain will claim what was committed before this call."""
        if getattr(settings, "CELERY_TASK_ALWAYS_EAGER", False):
            self._queue(flag=False)  # runs the drain right here
            return
        if self._pid != os.getpid():  # first use, or a forked child: start this one's thread
            with self._lock:
                if self._pid != os.getpid():
                    self._wanted = threading.Event()
                    threading.Thread(target=self._run, name=f"drain-kicker-{self.name}",
                                     daemon=True).start()
                    self._pid = os.getpid()
        self._wanted.set()

    def clear(self) -> None:
        """Called by the drain before each claim: a later kick queues a new drain."""
        if is_shared():
            cache.delete(self.flag)

    def _queue(self, *, flag: bool = True) -> None:
        flag = flag and is_shared()
        if flag and not cache.add(self.flag, 1, timeout=FLAG_TTL_SECONDS):
            return  # queued or running: it clears the flag before claiming, so it sees ours
        try:
            self._task().delay()
        except Exception:
            logger.exception("could not queue the %s drain; its sweep will run it", self.name)
            if flag:
                cache.delete(self.flag)

    def _run(self) -> None:
        wanted = self._wanted
        while True:
            wanted.wait()
            wanted.clear()
            try:
                self._queue()
            except Exception:  # the sweep makes up for it; keep the thread alive
                logger.exception("%s drain kick failed", self.name)
            time.sleep(COALESCE_SECONDS)
