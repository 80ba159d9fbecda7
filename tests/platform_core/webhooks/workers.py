"""Real Celery worker processes for the webhook reliability tests.

`celery -A config worker` on a Redis broker database of the tests' own and this test's
PostgreSQL database, consuming one queue named by the test (so its tasks never meet
anyone else's), optionally with its embedded beat running the delivery sweep every second.
The test process runs the bus eagerly; `to_worker(queue)` sends the webhook drain kicks of
the fan-out to the worker instead.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from contextlib import contextmanager
from pathlib import Path

import redis
from django.conf import settings
from django.db import connection
from kombu import Connection

from config.celery import app as celery_app

BROKER = os.environ.get("WEBHOOK_TEST_BROKER_URL",
                        os.environ.get("BENCH_BROKER_URL", "redis://127.0.0.1:6379/11"))
ROOT = Path(__file__).resolve().parents[3]


def _database_url() -> str:
    s = connection.settings_dict
    auth = s["USER"] + (f":{s['PASSWORD']}" if s.get("PASSWORD") else "")
    return f"postgres://{auth}@{s['HOST'] or '127.0.0.1'}:{s['PORT'] or 5432}/{s['NAME']}"


class Worker:
    def __init__(self, name: str, queue: str, tmp_path: Path, *, beat: bool,
                 timeout: float = 5, lease: float | None = 6) -> None:
        self.log = tmp_path / f"{name}.log"
        env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "tests.platform_core.webhooks.worker_settings",
            "DATABASE_URL": _database_url(),
            "CELERY_BROKER_URL": BROKER,
            "VAR_DIR": str(tmp_path / "var"),
            # The same keys as this process, so both read the encrypted secrets.
            "FIELD_ENCRYPTION_KEY": ",".join(settings.FIELD_ENCRYPTION_KEYS),
            "SECRET_KEY": settings.SECRET_KEY,
            "PYTHONPATH": str(ROOT),
            "WEBHOOK_TIMEOUT_SECONDS": str(timeout),
            "WEBHOOK_TEST_QUEUE": queue,
        }
        if lease is not None:
            env["WEBHOOK_DELIVERY_LEASE_SECONDS"] = str(lease)
        else:
            env.pop("WEBHOOK_DELIVERY_LEASE_SECONDS", None)
        command = [sys.executable, "-m", "celery", "-A", "config", "worker", "--pool=solo",
                   "-Q", queue, "-n", f"{name}-{queue}@%h", "--loglevel=INFO",
                   "--without-mingle", "--without-gossip", "--without-heartbeat"]
        if beat:
            command += ["-B", "--schedule", str(tmp_path / f"{name}-beat")]
        self.process = subprocess.Popen(  # noqa: S603
            command, cwd=ROOT, env=env, stdout=self.log.open("wb"), stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def wait_ready(self, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if b" ready." in self.log.read_bytes():
                return
            assert self.process.poll() is None, self.log.read_text()
            time.sleep(0.1)
        raise AssertionError(f"worker not ready:\n{self.log.read_text()}")

    def kill(self, sig=signal.SIGKILL) -> None:
        """Signal the worker's own process group (the worker and its embedded beat)."""
        try:
            os.killpg(self.process.pid, sig)
        except ProcessLookupError:
            return
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=15)
        # Wait for the rest of the group (the embedded beat) to be gone too.
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                os.killpg(self.process.pid, 0)
            except ProcessLookupError:
                return
            time.sleep(0.1)
        os.killpg(self.process.pid, signal.SIGKILL)


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
