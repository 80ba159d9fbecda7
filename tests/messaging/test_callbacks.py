"""Status callbacks as due rows: retried by the sweep on CALLBACK_RETRY_SCHEDULE (driven
with time-machine), then dropped; capped per origin like webhook endpoints."""

from __future__ import annotations

from datetime import timedelta

import pytest
import time_machine
from django.utils import timezone

from messaging.callbacks import callbacks_deliver_due, origin
from platform_core.webhooks.models import CallbackDelivery

from .conftest import SANDBOX_FAIL

pytestmark = pytest.mark.django_db


def _sweep(seconds: float) -> int:
    with time_machine.travel(timezone.now() + timedelta(seconds=seconds), tick=True):
        return callbacks_deliver_due()


def _types(receiver) -> list[str]:
    return sorted(r.json["type"] for r in receiver.requests)


def test_failed_callbacks_are_retried_by_the_sweep_then_dropped(tenant, receiver, send,
                                                                 settings):
    settings.CALLBACK_RETRY_SCHEDULE = "10,60"
    receiver.mode = "500"
    send({"channel": "sms", "to": SANDBOX_FAIL, "body": "x", "status_callback": receiver.url})
    assert _types(receiver) == ["message.failed", "message.queued"]  # first attempts
    rows = list(CallbackDelivery.objects.dangerously_unscoped())
    assert [(r.attempts, r.claim_token) for r in rows] == [(1, ""), (1, "")]
    assert all(r.last_error == "answered 500" for r in rows)

    assert _sweep(5) == 0  # not due yet: no timer task anywhere, the row waits
    assert _sweep(11) == 2
    assert len(receiver.requests) == 4
    receiver.mode = "ok"
    assert _sweep(11 + 61) == 2  # the last slot: delivered now
    assert _types(receiver).count("message.queued") == 3
    assert CallbackDelivery.objects.dangerously_unscoped().count() == 0  # nothing owed
    assert _sweep(3600) == 0


def test_callbacks_are_given_up_after_the_schedule(tenant, receiver, send, settings):
    settings.CALLBACK_RETRY_SCHEDULE = "1"
    receiver.mode = "500"
    send({"channel": "sms", "to": SANDBOX_FAIL, "body": "x", "status_callback": receiver.url})
    assert _sweep(2) == 2
    assert len(receiver.requests) == 4
    assert CallbackDelivery.objects.dangerously_unscoped().count() == 0
    assert _sweep(3600) == 0


def test_callbacks_are_capped_per_origin(tenant, receiver, settings, monkeypatch):
    from django.db import transaction

    from messaging import callbacks
    from platform_core.events.bus import emit_batch

    settings.WEBHOOK_ENDPOINT_CONCURRENCY = 2
    receiver.mode = "slow:0.2"
    monkeypatch.setattr(callbacks.DRAIN, "kick", lambda: None)  # drained below, at once
    with transaction.atomic():
        events = emit_batch([(tenant.org, "message.sent", {"message_id": f"msg_{i}"})
                             for i in range(6)])
        callbacks.callbacks_enqueue([(tenant.org.pk, e.pk, receiver.url) for e in events])
    assert callbacks_deliver_due() == 6
    assert sorted(receiver.delivered_event_ids()) == sorted(e.pk for e in events)
    assert receiver.max_in_flight == 2


def test_origin_is_scheme_host_and_port():
    assert origin("https://Hooks.Example.com/a?b=1") == "https://hooks.example.com:443"
    assert origin("http://127.0.0.1:8080/cb") == "http://127.0.0.1:8080"
