"""A worker killed (SIGKILL) in the middle of a delivery loses nothing.

Real processes: `celery -A config worker` on a Redis broker and this test's PostgreSQL
database. The first worker takes the delivery and is killed while the receiver holds the
request; a second worker (with its embedded beat) finds the delivery still pending once
the first one's lease ends, and delivers it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
import redis
from django.conf import settings
from django.db import connection, transaction
from kombu import Connection

from config.celery import app as celery_app
from platform_core.events.bus import emit
from platform_core.tenancy.context import tenant_context
from platform_core.webhooks import services
from platform_core.webhooks.models import WebhookDelivery

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

BROKER = os.environ.get("WEBHOOK_TEST_BROKER_URL", "redis://127.0.0.1:6379/11")
ROOT = Path(__file__).resolve().parents[3]


def _database_url() -> str:
    s = connection.settings_dict
    auth = s["USER"] + (f":{s['PASSWORD']}" if s.get("PASSWORD") else "")
    return f"postgres://{auth}@{s['HOST'] or '127.0.0.1'}:{s['PORT'] or 5432}/{s['NAME']}"


class Worker:
    def __init__(self, name: str, queue: str, tmp_path: Path, beat: bool) -> None:
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
            "WEBHOOK_DELIVERY_LEASE_SECONDS": "6",
            "WEBHOOK_TIMEOUT_SECONDS": "5",
            "WEBHOOK_TEST_QUEUE": queue,
        }
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


@pytest.mark.filterwarnings("ignore::celery.exceptions.AlwaysEagerIgnored")
def test_worker_killed_mid_delivery_loses_nothing(tenant, receiver, make_endpoint, tmp_path,
                                                  monkeypatch, private_targets):
    private_targets.WEBHOOK_DELIVERY_LEASE_SECONDS = 6
    queue = f"webhooks-kill-{uuid.uuid4().hex[:8]}"

    def to_broker(claims):
        with Connection(BROKER) as conn:
            for delivery_id, token in claims:
                celery_app.send_task("webhooks.deliver", args=[delivery_id, token],
                                     connection=conn, queue=queue)

    # The fan-out runs here (eager bus); its attempt goes to the real broker.
    monkeypatch.setattr(services, "_enqueue", to_broker)
    endpoint = make_endpoint(receiver.url)
    receiver.queue.append("hang")  # the first request is held: the worker is mid-delivery

    first = Worker("first", queue, tmp_path, beat=False)
    second = None
    try:
        first.wait_ready()
        with transaction.atomic():
            event = emit(organization=tenant.org, type="message.delivered",
                         data={"message_id": "msg_kill"})
        assert receiver.arrived.wait(20), first.log.read_text()
        assert receiver.requests[0].json["id"] == event.pk
        first.kill()  # SIGKILL while the request is in flight

        with tenant_context(tenant.org):
            row = WebhookDelivery.objects.get(event_id=event.pk)
        assert row.status == "pending"
        assert row.attempts == 0

        second = Worker("second", queue, tmp_path, beat=True)
        second.wait_ready()
        deadline = time.monotonic() + 40
        while time.monotonic() < deadline:
            with tenant_context(tenant.org):
                row = WebhookDelivery.objects.get(event_id=event.pk)
            if row.status != "pending":
                break
            time.sleep(0.2)
        assert receiver.delivered_event_ids() == [event.pk], second.log.read_text()
        assert row.status == "succeeded"
        assert row.attempts == 1
        assert row.endpoint_id == endpoint["id"]
        assert len(receiver.requests) == 2  # at least once: the receiver saw it twice
        assert "succeeded" in second.log.read_text()
    finally:
        first.kill()
        if second is not None:
            second.kill(signal.SIGTERM)
        # Remove this test's keys from the broker database (never a FLUSHDB).
        client = redis.Redis.from_url(BROKER)
        client.delete(queue, "unacked", "unacked_index", "unacked_mutex")
        for key in client.scan_iter(match=f"*{queue}*"):
            client.delete(key)
