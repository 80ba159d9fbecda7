"""A worker killed (SIGKILL) in the middle of its deliveries loses nothing.

Real processes (workers.py): the first worker claims the deliveries and is killed while
the receiver holds their requests; a second worker (with its embedded beat) finds them
still pending once the first one's lease ends, and delivers them, each accepted once.
"""

from __future__ import annotations

import signal
import time

import pytest
from django.db import transaction

from platform_core.events.bus import emit
from platform_core.tenancy.context import tenant_context
from platform_core.webhooks import services
from platform_core.webhooks.models import WebhookDelivery

from .workers import Worker, broker_queue, kick_to, new_queue

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True),
              pytest.mark.filterwarnings("ignore::celery.exceptions.AlwaysEagerIgnored")]


def _rows(tenant) -> list[WebhookDelivery]:
    with tenant_context(tenant.org):
        return list(WebhookDelivery.objects.order_by("id"))


def _wait(predicate, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.2)
    return False


def test_worker_killed_mid_delivery_loses_nothing(tenant, receiver, make_endpoint, tmp_path,
                                                  monkeypatch, private_targets):
    with broker_queue(new_queue("webhooks-kill")) as queue:
        # The fan-out runs here (eager bus); the drain it kicks runs in the real worker.
        monkeypatch.setattr(services.DRAIN, "kick", kick_to(queue))
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

            (row,) = _rows(tenant)
            assert (row.status, row.attempts) == ("pending", 0)

            second = Worker("second", queue, tmp_path, beat=True)
            second.wait_ready()
            assert _wait(lambda: _rows(tenant)[0].status != "pending", 40), (
                second.log.read_text())
            (row,) = _rows(tenant)
            assert receiver.delivered_event_ids() == [event.pk], second.log.read_text()
            assert (row.status, row.attempts) == ("succeeded", 1)
            assert row.endpoint_id == endpoint["id"]
            assert len(receiver.requests) == 2  # at least once: the receiver saw it twice
        finally:
            first.kill()
            if second is not None:
                second.kill(signal.SIGTERM)


def test_worker_killed_mid_batch_is_taken_over_within_30_seconds(
        tenant, receiver, make_endpoint, tmp_path, monkeypatch, private_targets):
    """Twenty deliveries, the first worker holding a batch of them (the per-endpoint cap)
    in flight when it is killed: the other worker delivers the rest at once and the
    killed worker's claimed batch within 30 s of the kill (the default lease: timeout +
    5 s, then the 1 s sweep), each event accepted exactly once."""
    with broker_queue(new_queue("webhooks-kill-batch")) as queue:
        monkeypatch.setattr(services.DRAIN, "kick", kick_to(queue))
        make_endpoint(receiver.url)
        receiver.mode = "hang"
        first = Worker("first", queue, tmp_path, beat=False, timeout=10, lease=None)
        second = None
        try:
            first.wait_ready()
            with transaction.atomic():
                events = [emit(organization=tenant.org, type="message.delivered",
                               data={"message_id": f"msg_{i}"}) for i in range(20)]
            assert _wait(lambda: len(receiver.requests) >= 8, 20), first.log.read_text()
            time.sleep(0.3)  # the worker holds exactly its capped batch
            assert len(receiver.requests) == 8
            claimed = {r.event_id for r in _rows(tenant) if r.claim_token}
            assert len(claimed) == 8
            first.kill()
            killed_at = time.monotonic()
            receiver.mode = "ok"

            second = Worker("second", queue, tmp_path, beat=True, timeout=10, lease=None)
            second.wait_ready()
            assert _wait(lambda: all(r.status == "succeeded" for r in _rows(tenant)), 40), (
                second.log.read_text())
            taken_over_in = time.monotonic() - killed_at
            assert taken_over_in <= 30, taken_over_in
            delivered = receiver.delivered_event_ids()
            assert sorted(delivered) == sorted(e.pk for e in events)  # each once
            assert {r.attempts for r in _rows(tenant)} == {1}
        finally:
            first.kill()
            if second is not None:
                second.kill(signal.SIGTERM)
