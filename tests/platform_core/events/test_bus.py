"""The event bus: outbox write in the caller's transaction, isolated fan-out after commit,
re-dispatch of whatever was not fanned out (Document 1, 6; issue 3 "The event bus")."""

from __future__ import annotations

from datetime import timedelta
from unittest import mock

import pytest
import time_machine
from django.db import transaction
from django.utils import timezone

from platform_core.audit.models import AuditLogEntry
from platform_core.events import bus
from platform_core.events.bus import emit, register_fanout
from platform_core.events.models import Event
from platform_core.events.tasks import drain_events, redispatch_pending
from platform_core.tenancy.context import tenant_context

from .conftest import feed_ids


@pytest.fixture
def handlers(monkeypatch):
    """An isolated fan-out registry: only the handlers a test registers."""
    monkeypatch.setattr(bus, "_FANOUTS", {})
    calls: list[tuple[str, str]] = []

    def recorder(name):
        def handle(event):
            calls.append((name, event.pk))
        return handle

    return calls, recorder


def _row(event_id: str) -> Event:
    return Event.objects.dangerously_unscoped().get(pk=event_id)


def test_envelope_shape(tenant):
    event = emit(organization=tenant.org, type="contact.updated",
                 data={"contact_id": "cnt_1", "at": timezone.now()})
    envelope = event.envelope()
    assert set(envelope) == {"id", "type", "created_at", "data"}
    assert envelope["id"].startswith("evt_")
    assert envelope["type"] == "contact.updated"
    assert envelope["created_at"].endswith("Z")
    assert isinstance(envelope["data"]["at"], str)  # stored as JSON, as readers see it
    assert _row(event.pk).envelope() == envelope


def test_fan_out_runs_after_commit_only(tenant, handlers, django_capture_on_commit_callbacks):
    calls, recorder = handlers
    register_fanout("a", recorder("a"))
    register_fanout("b", recorder("b"))
    with django_capture_on_commit_callbacks(execute=True) as callbacks, transaction.atomic():
        event = emit(organization=tenant.org, type="message.sent", data={"message_id": "msg_1"})
        assert calls == []  # nothing leaves before the transaction commits
        assert _row(event.pk).dispatched_at is None
    assert len(callbacks) == 1
    assert calls == [("a", event.pk), ("b", event.pk)]
    row = _row(event.pk)
    assert row.dispatched_at is not None
    assert row.dispatch_attempts == 1


def test_emit_batch_is_one_insert_and_one_commit_hook(
        tenant, other_tenant, handlers, django_capture_on_commit_callbacks,
        django_assert_num_queries):
    calls, recorder = handlers
    register_fanout("a", recorder("a"))
    items = [(tenant.org, "message.sent", {"message_id": f"msg_{i}"}) for i in range(30)]
    items.append((other_tenant.org, "message.delivered", {"message_id": "msg_x"}))
    with django_capture_on_commit_callbacks(execute=True) as callbacks, transaction.atomic():
        with django_assert_num_queries(1):
            events = bus.emit_batch(items)
        assert calls == []
    assert len(callbacks) == 1
    assert [e.pk for e in events] == sorted(e.pk for e in events)  # submission order
    assert calls == [("a", e.pk) for e in events]
    rows = {row.pk: row for row in Event.objects.dangerously_unscoped().filter(
        pk__in=[e.pk for e in events])}
    assert rows[events[0].pk].data == {"message_id": "msg_0"}
    assert rows[events[-1].pk].organization_id == other_tenant.org.pk
    assert all(row.dispatched_at is not None for row in rows.values())
    assert bus.emit_batch([]) == []


def test_rolled_back_change_emits_nothing(tenant, handlers, django_capture_on_commit_callbacks):
    calls, recorder = handlers
    register_fanout("a", recorder("a"))
    def failing_change():
        with transaction.atomic():
            emit(organization=tenant.org, type="message.sent", data={})
            raise RuntimeError("the change failed")

    with django_capture_on_commit_callbacks(execute=True), pytest.raises(RuntimeError):
        failing_change()
    assert calls == []
    assert not Event.objects.for_organization(tenant.org).exists()


def test_failing_handler_is_isolated_and_retried_alone(tenant, handlers, emit_committed):
    calls, recorder = handlers
    state = {"broken": True}

    def flaky(event):
        # Its own writes are rolled back with it (a savepoint per handler).
        with tenant_context(event.organization):
            AuditLogEntry.objects.create(organization=event.organization, actor_type="system",
                                         action="flaky.wrote")
        if state["broken"]:
            raise ConnectionError("receiver down")
        calls.append(("flaky", event.pk))

    register_fanout("before", recorder("before"))
    register_fanout("flaky", flaky)
    register_fanout("after", recorder("after"))
    event = emit_committed(tenant.org)

    assert calls == [("before", event.pk), ("after", event.pk)]  # the others still ran
    row = _row(event.pk)
    assert row.dispatched_at is None
    assert row.failed_handlers == ["flaky"]
    assert row.next_dispatch_at is not None
    assert not AuditLogEntry.objects.filter(action="flaky.wrote").exists()

    # Within the backoff nothing is re-dispatched.
    assert redispatch_pending() == 0
    state["broken"] = False
    with time_machine.travel(timezone.now() + timedelta(seconds=61), tick=False):
        assert redispatch_pending() == 1
    # Only the failed handler ran again; the event is now dispatched.
    assert calls == [("before", event.pk), ("after", event.pk), ("flaky", event.pk)]
    row = _row(event.pk)
    assert row.dispatched_at is not None
    assert row.dispatch_attempts == 2
    assert row.failed_handlers == []
    assert AuditLogEntry.objects.filter(action="flaky.wrote").count() == 1


def test_crash_between_commit_and_fan_out_loses_nothing(
    tenant, emit_committed, django_capture_on_commit_callbacks, client
):
    """The process dies after commit, before the fan-out task is queued: the beat job
    re-dispatches the outbox row and the event reaches the feed (and every handler)."""
    with django_capture_on_commit_callbacks(execute=False), transaction.atomic():
        event = emit(organization=tenant.org, type="message.delivered", data={"n": 1})
    # The after-commit callback never ran (crash): committed but not dispatched.
    assert _row(event.pk).dispatched_at is None
    api = tenant.client()
    assert api.get(f"/api/v1/events/{event.pk}").status_code == 404

    assert redispatch_pending() == 0  # still inside the grace period
    with time_machine.travel(timezone.now() + timedelta(seconds=31), tick=False):
        assert redispatch_pending() == 1
    assert _row(event.pk).dispatched_at is not None
    response = api.get(f"/api/v1/events/{event.pk}")
    assert response.status_code == 200
    assert response.json()["data"]["id"] == event.pk
    # Dispatched events are not scanned again.
    with time_machine.travel(timezone.now() + timedelta(seconds=120), tick=False):
        assert redispatch_pending() == 0


def test_broker_outage_at_enqueue_is_caught_up(tenant, emit_committed):
    with mock.patch.object(drain_events, "delay", side_effect=ConnectionError("no broker")):
        event = emit_committed(tenant.org)  # the caller's request does not fail
    assert _row(event.pk).dispatched_at is None
    with time_machine.travel(timezone.now() + timedelta(seconds=31), tick=False):
        assert redispatch_pending() == 1
    assert _row(event.pk).dispatched_at is not None
    assert feed_ids(tenant.org) == [event.pk]


def test_dispatching_twice_does_not_fan_out_twice(tenant, handlers, emit_committed):
    calls, recorder = handlers
    register_fanout("a", recorder("a"))
    event = emit_committed(tenant.org)
    assert bus.dispatch(event.pk) is False  # already dispatched: a no-op
    assert calls == [("a", event.pk)]


def test_feed_append_is_idempotent_on_redispatch(tenant, emit_committed):
    event = emit_committed(tenant.org)
    Event.objects.dangerously_unscoped().filter(pk=event.pk).update(dispatched_at=None)
    assert bus.dispatch(event.pk) is True  # handlers run again (at least once)
    assert feed_ids(tenant.org) == [event.pk]  # but the feed holds it once


def test_give_up_after_attempt_limit(tenant, handlers, emit_committed, settings):
    settings.EVENTS_MAX_DISPATCH_ATTEMPTS = 2

    def broken(event):
        raise ValueError("always")

    register_fanout("broken", broken)
    event = emit_committed(tenant.org)
    with time_machine.travel(timezone.now() + timedelta(seconds=61), tick=False):
        assert redispatch_pending() == 1
    assert _row(event.pk).dispatch_attempts == 2
    with time_machine.travel(timezone.now() + timedelta(hours=2), tick=False):
        assert redispatch_pending() == 0


def test_beat_schedule_runs_the_redispatch_scan():
    from config.beat import BEAT_SCHEDULE

    entries = [e for e in BEAT_SCHEDULE.values()
               if e["task"] == "events.redispatch_pending"]
    assert entries
    assert entries[0]["schedule"] <= 30


def test_outbox_rows_are_purged_after_the_retention(tenant, emit_committed):
    from platform_core.events.tasks import purge_outbox

    old = emit_committed(tenant.org)
    with time_machine.travel(timezone.now() + timedelta(days=31), tick=False):
        recent = emit_committed(tenant.org)
        assert purge_outbox() == 1
    remaining = set(Event.objects.for_organization(tenant.org).values_list("pk", flat=True))
    assert remaining == {recent.pk}
    assert old.pk not in remaining
