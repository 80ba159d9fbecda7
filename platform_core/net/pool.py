"""Concurrent outbound requests: a bounded thread pool over the one hardened client.

Each request still goes through `platform_core.net.http` (SSRF check at send time,
connection pinned to the checked address, no redirects, bounded timeout, pooled
keep-alive connections per host), from one of a process-wide set of threads
(`OUTBOUND_HTTP_THREADS`, 64): threads that wait on a socket cost no CPU, and a slow
receiver holds only the threads of its own requests. How many requests one receiver may
have in flight is the caller's rule (the drains cap them per endpoint); this module only
runs what it is given and hands back what finished.

    batch = SendBatch()
    batch.submit(job, job.send)           # job.send() runs in a pool thread
    for job, outcome in batch.collect(timeout=0.05): ...
"""

from __future__ import annotations

import os
import queue
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from django.conf import settings

_lock = threading.Lock()
_executor: tuple[int, ThreadPoolExecutor] | None = None
_busy = 0  # requests in flight in this process, over every SendBatch


def threads() -> int:
    return int(getattr(settings, "OUTBOUND_HTTP_THREADS", 64))


def _pool() -> ThreadPoolExecutor:
    global _executor
    with _lock:
        if _executor is None or _executor[0] != os.getpid():  # first use, or a forked child
            _executor = (os.getpid(), ThreadPoolExecutor(max_workers=threads(),
                                                         thread_name_prefix="outbound"))
        return _executor[1]


def free_slots() -> int:
    """Threads of this process not sending anything right now."""
    return max(threads() - _busy, 0)


class SendBatch:
    """The requests one drain has in flight, and those that finished since it last looked."""

    def __init__(self) -> None:
        self._done: queue.SimpleQueue = queue.SimpleQueue()
        self.in_flight = 0

    def submit(self, job: Any, send) -> None:
        """Run `send()` in a pool thread; its return value (or exception) is the outcome."""
        global _busy
        with _lock:
            _busy += 1
        self.in_flight += 1

        def finished(future: Future) -> None:
            global _busy
            with _lock:
                _busy -= 1
            self._done.put((job, future))

        _pool().submit(send).add_done_callback(finished)

    def collect(self, timeout: float, linger: float = 0.0) -> list[tuple[Any, Any]]:
        """What finished: waits up to `timeout` for the first, then up to `linger` more for
        the rest of what is in flight (so that they are recorded together), then takes all
        that are done. An outcome is the return value of `send`, or the exception raised."""
        if not self.in_flight:
            return []
        out: list[tuple[Any, Any]] = []
        try:
            item = self._done.get(timeout=timeout) if timeout > 0 else self._done.get_nowait()
        except queue.Empty:
            return out
        until = time.monotonic() + linger
        while True:
            job, future = item
            self.in_flight -= 1
            error = future.exception()
            out.append((job, error if error is not None else future.result()))
            left = until - time.monotonic()
            try:
                item = (self._done.get(timeout=left) if left > 0 and self.in_flight
                        else self._done.get_nowait())
            except queue.Empty:
                return out
