"""Real Celery worker processes for the webhook reliability tests.

`celery -A config worker` on a Redis broker database of the tests' own and this test's
PostgreSQL database, consuming one queue named by the test (so its tasks never meet
anyone else's), optionally with its embedded beat running the delivery sweep every second.
The test process runs the bus eagerly; `to_worker(queue)` sends the webhook drain kicks of
the fan-out to the worker instead.
"""

from __future__ import annotations

import os
import uuid
from contextlib import contextmanager
from pathlib import Path

import redis
from kombu import Connection

from config.celery import app as celery_app
from tests.worker_process import WorkerProcess

BROKER = os.environ.get("WEBHOOK_TEST_BROKER_URL",
                        os.environ.get("BENCH_BROKER_URL", "redis://127.0.0.1:6379/11"))


class Worker(WorkerProcess):
    def __init__(self, name: str, queue: str, tmp_path: Path, *, beat: bool,
                 timeout: float = 5, lease: float | None = 6) -> None:
        env = {"WEBHOOK_TIMEOUT_SECONDS": str(timeout), "WEBHOOK_TEST_QUEUE": queue,
               # None: the worker's default lease, computed from the timeout
               "WEBHOOK_DELIVERY_LEASE_SECONDS": None if lease is None else str(lease)}
        super().__init__(name, queue, tmp_path, broker=BROKER, beat=beat, env=env,
                         settings_module="tests.platform_core.webhooks.worker_settings")


def new_queue(name: str) -> str:
    return f"{name}-{uuid.uuid4().hex[:8]}"


def kick_to(queue: str):
    """A replacement for the webhook drain's kick: queue `webhooks.drain` on `queue`."""

    def kick() -> None:
        with Connection(BROKER) as conn:
            celery_app.send_task("webhooks.drain", connection=conn, queue=queue)

    return kick


@contextmanager
def broker_queue(queue: str):
    """Remove the test's keys from the broker database afterwards (never a FLUSHDB)."""
    try:
        yield queue
    finally:
        client = redis.Redis.from_url(BROKER)
        client.delete(queue, "unacked", "unacked_index", "unacked_mutex")
        for key in client.scan_iter(match=f"*{queue}*"):
            client.delete(key)
