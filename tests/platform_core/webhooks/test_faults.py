"""Receiver faults and the retry schedule: after every fault each event arrives at least once.

The beat job is driven directly with time-machine instead of sleeping.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
import time_machine
from django.utils import timezone

from platform_core.events.models import Event
from platform_core.tenancy.context import tenant_context
from platform_core.webhooks import conf, services

from .conftest import deliveries, endpoint_row

pytestmark = pytest.mark.django_db


def _emit_three(tenant, emit):
    return [emit(tenant, "message.delivered", {"message_id": f"msg_{i}"}).pk for i in range(3)]


def _operational(tenant, type_):
    with tenant_context(tenant.org):
        return list(Event.objects.filter(type=type_).order_by("created_at"))


@pytest.mark.parametrize("fault", ["500", "hang", "reset"])
def test_fault_then_recovery_delivers_everything(fault, tenant, receiver, make_endpoint, emit,
                                                 run_due, settings):
    settings.WEBHOOK_TIMEOUT_SECONDS = 0.5
    make_endpoint(receiver.url)
    receiver.mode = fault
    events = _emit_three(tenant, emit)

    rows = deliveries(tenant)
    assert len(rows) == 3
    for row in rows:
        assert row.status == "pending"
        assert row.attempts == 1
        assert row.claim_token == ""
        # First retry slot: 10 s with +/-10% jitter.
        delay = (row.next_retry_at - row.last_attempt_at).total_seconds()
        assert 9 - 0.01 <= delay <= 11 + 0.01
        if fault == "500":
            assert row.response_status == 500
            assert row.last_error == ""
        elif fault == "hang":
            assert row.response_status is None
            assert row.last_error.startswith("timeout")
            assert row.response_headers is None
        else:
            assert row.response_status is None
            assert row.last_error.split(":")[0] in ("connection_reset", "protocol_error")
    assert receiver.delivered_event_ids() == []

    # Not due yet: nothing happens.
    assert run_due(1) == 0
    # The receiver recovers; the next tick after the slot delivers every event.
    receiver.release.set()
    receiver.mode = "ok"
    assert run_due(15) == 3
    assert sorted(receiver.delivered_event_ids()) == sorted(events)
    assert {r.status for r in deliveries(tenant)} == {"succeeded"}
    assert {r.attempts for r in deliveries(tenant)} == {2}


def test_exhausted_schedule_fails_into_dlq_and_emits(tenant, receiver, make_endpoint, emit,
                                                     run_due, settings):
    settings.WEBHOOK_RETRY_SCHEDULE = [5, 20]
    settings.WEBHOOK_RETRY_JITTER = 0
    endpoint = make_endpoint(receiver.url)
    receiver.mode = "500"
    event = emit(tenant)
    assert run_due(6) == 1
    row = deliveries(tenant)[0]
    assert (row.status, row.attempts) == ("pending", 2)
    assert run_due(6 + 21) == 1
    row = deliveries(tenant)[0]
    assert (row.status, row.attempts, row.next_retry_at) == ("failed", 3, None)
    assert row.dead_lettered_at is not None
    assert row.failed_at is not None

    exhausted = _operational(tenant, services.EVENT_DELIVERY_EXHAUSTED)
    assert len(exhausted) == 1
    assert exhausted[0].data["delivery_id"] == row.pk
    assert exhausted[0].data["event_id"] == event.pk
    assert exhausted[0].data["attempts"] == 3
    assert exhausted[0].data["last_response_status"] == 500

    dlq = tenant.client().get("/api/v1/webhooks/dlq").json()["data"]
    assert [d["id"] for d in dlq] == [row.pk]
    # Nothing more happens on its own.
    assert run_due(3600) == 0

    # The receiver recovers; a retry brings it home.
    receiver.mode = "ok"
    url = f"/api/v1/webhooks/{endpoint['id']}/deliveries/{row.pk}/retry"
    assert tenant.client().post(url).status_code == 202
    assert run_due(0) == 1
    assert receiver.delivered_event_ids() == [event.pk]
    assert tenant.client().get("/api/v1/webhooks/dlq").json()["data"] == []


def test_gone_disables_endpoint_and_recovers_after_reenable(tenant, receiver, make_endpoint,
                                                            emit, run_due):
    endpoint = make_endpoint(receiver.url)
    receiver.queue.append("410")
    first = emit(tenant, data={"message_id": "m1"})
    ep = endpoint_row(tenant, endpoint["id"])
    assert not ep.enabled
    assert ep.disabled_reason == "gone"
    disabled = _operational(tenant, services.EVENT_ENDPOINT_DISABLED)
    assert [e.data["reason"] for e in disabled] == ["gone"]
    row = deliveries(tenant, event_id=first.pk)[0]
    assert row.status == "failed"
    assert row.dead_lettered_at is not None
    # 410 is final for that delivery: no exhaustion event, no more attempts.
    assert _operational(tenant, services.EVENT_DELIVERY_EXHAUSTED) == []

    # While disabled, new events create no deliveries.
    second = emit(tenant, data={"message_id": "m2"})
    assert deliveries(tenant, event_id=second.pk) == []
    assert tenant.client().get(f"/api/v1/webhooks/{endpoint['id']}").json()["data"][
        "disabled_reason"] == "gone"

    # The receiver is back: re-enable, retry the failed one; it arrives.
    response = tenant.client().patch(f"/api/v1/webhooks/{endpoint['id']}", {"enabled": True},
                                     format="json")
    assert response.status_code == 200
    assert response.json()["data"]["disabled_reason"] is None
    url = f"/api/v1/webhooks/{endpoint['id']}/deliveries/{row.pk}/retry"
    assert tenant.client().post(url).status_code == 202
    run_due(0)
    third = emit(tenant, data={"message_id": "m3"})
    assert receiver.delivered_event_ids() == [first.pk, third.pk]


def test_pending_deliveries_wait_while_disabled_and_resume(tenant, receiver, make_endpoint,
                                                           emit, run_due):
    endpoint = make_endpoint(receiver.url)
    receiver.mode = "500"
    events = _emit_three(tenant, emit)
    tenant.client().patch(f"/api/v1/webhooks/{endpoint['id']}", {"enabled": False},
                          format="json")
    receiver.mode = "ok"
    assert run_due(60) == 0  # due, but the endpoint is disabled
    tenant.client().patch(f"/api/v1/webhooks/{endpoint['id']}", {"enabled": True},
                          format="json")
    assert run_due(60) == 3
    assert sorted(receiver.delivered_event_ids()) == sorted(events)


def test_retry_after_is_honored(tenant, receiver, make_endpoint, emit, run_due):
    make_endpoint(receiver.url)
    receiver.queue.append("503:120")
    emit(tenant)
    row = deliveries(tenant)[0]
    assert (row.next_retry_at - row.last_attempt_at).total_seconds() >= 120
    assert run_due(60) == 0
    assert run_due(125) == 1
    assert len(receiver.delivered_event_ids()) == 1


def test_endpoint_failing_for_the_sustained_period_is_disabled(tenant, receiver, make_endpoint,
                                                                emit, run_due, settings):
    settings.WEBHOOK_DISABLE_AFTER_SECONDS = 5 * 24 * 3600
    # Retries far away: each step below is the attempt of its own event alone.
    settings.WEBHOOK_RETRY_SCHEDULE = [90 * 24 * 3600] * 3
    endpoint = make_endpoint(receiver.url)
    receiver.mode = "500"
    emit(tenant)
    ep = endpoint_row(tenant, endpoint["id"])
    assert ep.enabled
    assert ep.failing_since is not None
    # Still failing four days later: not yet.
    with time_machine.travel(timezone.now() + timedelta(days=4), tick=True):
        emit(tenant, data={"message_id": "later"})
    assert endpoint_row(tenant, endpoint["id"]).enabled
    # A success resets the clock...
    receiver.queue.append("ok")
    with time_machine.travel(timezone.now() + timedelta(days=4, hours=1), tick=True):
        emit(tenant, data={"message_id": "ok"})
    assert endpoint_row(tenant, endpoint["id"]).failing_since is None
    # ...and five days of nothing but failures disables it, with an event.
    with time_machine.travel(timezone.now() + timedelta(days=5), tick=True):
        emit(tenant, data={"message_id": "a"})
    with time_machine.travel(timezone.now() + timedelta(days=10, minutes=1), tick=True):
        emit(tenant, data={"message_id": "b"})
    ep = endpoint_row(tenant, endpoint["id"])
    assert not ep.enabled
    assert ep.disabled_reason == "failing"
    events = _operational(tenant, services.EVENT_ENDPOINT_DISABLED)
    assert [e.data["reason"] for e in events] == ["failing"]


def test_exhausted_events_are_not_sent_to_the_endpoint_they_are_about(tenant, receiver,
                                                                      make_endpoint):
    failing = make_endpoint(receiver.url + "?failing=1", events=["*"])
    watcher = make_endpoint(receiver.url + "?watcher=1", events=[services.EVENT_DELIVERY_EXHAUSTED])
    with tenant_context(tenant.org):
        exhausted = Event(organization=tenant.org, type=services.EVENT_DELIVERY_EXHAUSTED,
                      data={"endpoint_id": failing["id"], "delivery_id": "dlv_x"},
                      created_at=timezone.now())
        exhausted.save()
        rows = services.deliveries_create_for_event(exhausted)
    assert [r.endpoint_id for r in rows] == [watcher["id"]]


def test_default_schedule_spans_a_day_with_jitter():
    schedule = conf.DEFAULT_RETRY_SCHEDULE
    assert all(b > a for a, b in zip(schedule, schedule[1:], strict=False))
    assert sum(schedule) * (1 - 0.1) >= 24 * 3600
    delays = [services.next_retry_delay(1) for _ in range(200)]
    assert min(delays) >= 9
    assert max(delays) <= 11
    assert len(set(delays)) > 100
    assert services.next_retry_delay(len(schedule) + 1) is None
    # Retry-After is a floor, capped.
    assert services.next_retry_delay(1, retry_after=600) == 600
    assert services.next_retry_delay(1, retry_after=10**9) == 24 * 3600


def test_retry_schedule_setting_accepts_a_comma_list(settings):
    settings.WEBHOOK_RETRY_SCHEDULE = "1, 2,3"
    assert conf.retry_schedule() == [1, 2, 3]


def test_a_leased_delivery_is_left_alone_until_its_lease_ends(tenant, receiver, make_endpoint,
                                                              monkeypatch, run_due, settings):
    """A drain's claim is a lease: another drain sends nothing of it while it runs; once
    the lease has ended (the first worker died) it is taken over, and the late answer of
    the first claim, if any, is not recorded over the new owner's."""
    from platform_core.events.bus import emit as bus_emit
    from platform_core.webhooks import delivery, engine

    settings.WEBHOOK_DELIVERY_LEASE_SECONDS = 20
    monkeypatch.setattr(services.DRAIN, "kick", lambda: None)  # no drain after the fan-out
    make_endpoint(receiver.url)
    event = bus_emit(organization=tenant.org, type="message.delivered", data={})
    from platform_core.events.bus import dispatch

    dispatch(event.pk)  # the fan-out: one delivery, due now
    ids, token = engine.claim(delivery.SOURCE, 10)  # a first drain takes it...
    assert len(ids) == 1
    assert run_due(5) == 0  # ...so a second one finds nothing due
    assert receiver.requests == []

    assert run_due(21) == 1  # the lease has ended: taken over and delivered
    assert receiver.delivered_event_ids() == [event.pk]
    (job,) = delivery.SOURCE.prepare(ids, token, lease_deadline=0)
    with tenant_context(tenant.org):
        delivery.SOURCE.record([(job, engine.Outcome(error=http_error()))])
    row = deliveries(tenant)[0]
    assert (row.status, row.attempts) == ("succeeded", 1)  # the stale claim changed nothing


def http_error():
    from platform_core.net.http import OutboundError

    return OutboundError("timeout", "late")
