"""A broadcast to 10,000 contacts survives a worker killed (SIGKILL) in the middle of it:
it completes with exact counters, one message per recipient and no message sent twice.

Real processes: `celery -A config worker` (prefork) on a Redis broker database and queue
of this test's own, on this test's PostgreSQL database, in test mode (the sandbox double,
its receipts 50 ms after the send). The first worker is killed once a few thousand
messages exist; a second one with its embedded beat resumes the broadcast (its runners'
heartbeat stopped), re-queues what the dead worker held, and the run completes. The
sandbox provider's sends are logged to Redis by `worker_hooks.py`.

The throughput seen (messages queued and delivered per second) is printed (`-s`).
"""

from __future__ import annotations

import os
import signal
import time
import uuid
from collections import Counter
from pathlib import Path

import pytest
import redis
from django.db.models import Max, Min
from kombu import Connection

from config.celery import app as celery_app
from contacts.models import Contact
from messaging.broadcasts import services
from messaging.broadcasts.models import Broadcast
from messaging.models import Message
from platform_core.events.models import Event
from platform_core.tenancy.context import tenant_context
from tests.worker_process import WorkerProcess

from .conftest import make_list, recount

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

BROKER = os.environ.get("BROADCAST_TEST_BROKER_URL", "redis://127.0.0.1:6379/12")
RECIPIENTS = 10_000
KILL_AFTER = 3_000
CONCURRENCY = 2


class Worker(WorkerProcess):
    def __init__(self, name: str, queue: str, run_id: str, send_log: str, tmp_path: Path,
                 beat: bool) -> None:
        super().__init__(
            name, queue, tmp_path, broker=BROKER, beat=beat, loglevel="WARNING",
            settings_module="tests.messaging.broadcasts.worker_settings",
            pool=(f"--concurrency={CONCURRENCY}",),
            env={"TEST_RUN_ID": run_id,  # one cache prefix (token buckets) for both workers
                 "BROADCAST_TEST_QUEUE": queue, "BROADCAST_TEST_SEND_LOG": send_log})


def _broadcast(tenant, broadcast_id: str) -> Broadcast:
    with tenant_context(tenant.org):
        return Broadcast.objects.get(pk=broadcast_id)


def _wait(predicate, timeout: float, worker: Worker, what: str):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        assert worker.process.poll() is None, worker.text()
        time.sleep(0.25)
    raise AssertionError(f"timed out waiting for {what}:\n{worker.text()}")


def _rate(count: int, first, last) -> float:
    seconds = (last - first).total_seconds() if first and last else 0
    return round(count / seconds, 1) if seconds > 0 else float("inf")


@pytest.mark.filterwarnings("ignore::celery.exceptions.AlwaysEagerIgnored")
def test_broadcast_of_10000_survives_a_killed_worker(tenant, tmp_path, monkeypatch):
    queue = f"broadcast-kill-{uuid.uuid4().hex[:8]}"
    run_id = f"bkill-{uuid.uuid4().hex[:8]}"
    send_log = f"{queue}:sends"

    def to_broker(name: str):
        def send(broadcast_id: str, count: int = 1, countdown: float | None = None) -> None:
            with Connection(BROKER) as conn:
                for _ in range(count):
                    celery_app.send_task(name, args=[broadcast_id], connection=conn,
                                         queue=queue, countdown=countdown)
        return send

    # Only the start leaves this process (the view's after-commit); the rest is the workers'.
    monkeypatch.setattr(services, "enqueue_start", to_broker("messaging.broadcast_start"))
    monkeypatch.setattr(services, "enqueue_runners", to_broker("messaging.broadcast_run"))

    contacts = Contact.objects.for_organization(tenant.org).bulk_create([
        Contact(organization=tenant.org, first_name=f"C{i}", phone=f"+1415{i:07d}")
        for i in range(2_000_000, 2_000_000 + RECIPIENTS)
    ], batch_size=2000)
    contact_list = make_list(tenant, contacts)

    first = Worker("first", queue, run_id, send_log, tmp_path, beat=False)
    second = None
    broker = redis.Redis.from_url(BROKER)
    try:
        response = tenant.client().post("/api/v1/broadcasts", {
            "name": "Ten thousand", "channel": "sms",
            "body": "Hi {{contact.first_name}}, our sale starts now.",
            "audience": {"list_id": contact_list.pk}}, format="json")
        assert response.status_code == 202, response.content
        broadcast_id = response.json()["data"]["id"]

        _wait(lambda: _broadcast(tenant, broadcast_id).queued >= KILL_AFTER, 600, first,
              f"{KILL_AFTER} queued messages")
        first.kill()  # SIGKILL mid-broadcast
        at_kill = _broadcast(tenant, broadcast_id)
        assert at_kill.status == "running"
        assert at_kill.queued < RECIPIENTS, "the broadcast ended before the kill"

        second = Worker("second", queue, run_id, send_log, tmp_path, beat=True)

        def finished():
            b = _broadcast(tenant, broadcast_id)
            return (b.status == "completed" and b.delivered + b.failed == RECIPIENTS) and b

        done = _wait(finished, 600, second, "the broadcast to complete and settle")
        time.sleep(1)  # anything still in flight would show up now
        done = _broadcast(tenant, broadcast_id)

        with tenant_context(tenant.org):
            messages = Message.objects.filter(campaign_id=broadcast_id)
            assert messages.count() == RECIPIENTS
            assert messages.values("contact_id").distinct().count() == RECIPIENTS
            failed = list(messages.filter(status="failed").values_list("error_code", flat=True))
            times = messages.aggregate(Min("created_at"), Max("created_at"),
                                       Max("delivered_at"))
            started_events = Event.objects.filter(type="broadcast.started").count()
            completed_events = Event.objects.filter(type="broadcast.completed").count()

        counters = {name: getattr(done, name) for name in recount(tenant, broadcast_id)}
        assert counters == recount(tenant, broadcast_id)
        assert done.total_recipients == done.queued == RECIPIENTS
        assert done.skipped_opted_out == done.skipped_invalid == done.canceled == 0
        assert done.delivered + done.failed == RECIPIENTS
        # At most one provider call per pool process was cut by the kill: those end
        # failed (the outcome is unknown, so they are not sent again); nothing else fails.
        assert set(failed) <= {"DISPATCH_INTERRUPTED"}
        assert len(failed) <= CONCURRENCY
        assert (started_events, completed_events) == (1, 1)

        sends = [item.decode() for item in broker.lrange(send_log, 0, -1)]
        repeated = [pk for pk, n in Counter(sends).items() if n > 1]
        assert repeated == [], f"sent twice: {repeated[:5]}"
        with tenant_context(tenant.org):
            delivered_ids = set(Message.objects.filter(campaign_id=broadcast_id,
                                                       status="delivered")
                                .values_list("pk", flat=True))
        assert delivered_ids <= set(sends)

        queued_rate = _rate(RECIPIENTS, times["created_at__min"], times["created_at__max"])
        delivered_rate = _rate(RECIPIENTS, times["created_at__min"],
                               times["delivered_at__max"])
        first_phase = _rate(at_kill.queued, done.started_at, at_kill.updated_at)
        print(f"\nbroadcast of {RECIPIENTS}: {len(failed)} interrupted; first worker "
              f"queued {at_kill.queued} at {first_phase}/s; overall {queued_rate} queued/s, "
              f"{delivered_rate} delivered/s (including the kill and the resume); completed "
              f"{(done.completed_at - done.started_at).total_seconds():.1f} s after the start")
    finally:
        first.kill()
        if second is not None:
            second.kill(signal.SIGTERM)
        broker.delete(queue, send_log, "unacked", "unacked_index", "unacked_mutex")
        for key in broker.scan_iter(match=f"*{queue}*"):
            broker.delete(key)
        cache_redis = redis.Redis.from_url(os.environ.get("REDIS_URL",
                                                          "redis://127.0.0.1:6379/0"))
        for key in cache_redis.scan_iter(match=f"*test:{run_id}:*"):
            cache_redis.delete(key)
