"""The fan-out drain: batches claimed from the outbox, one bad event never blocking its
batch, and statements per batch that do not grow with its size."""

from __future__ import annotations

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from platform_core.events import bus
from platform_core.events.bus import register_fanout
from platform_core.events.models import Event


@pytest.fixture
def only(monkeypatch):
    """An isolated fan-out registry."""
    monkeypatch.setattr(bus, "_FANOUTS", {})
    monkeypatch.setattr(bus.DRAIN, "kick", lambda: None)  # the tests drain by hand


def _emit(org, count: int, **extra):
    with transaction.atomic():
        return bus.emit_batch([(org, "message.sent", {"n": i, **extra}) for i in range(count)])


def _row(event_id: str) -> Event:
    return Event.objects.dangerously_unscoped().get(pk=event_id)


def test_one_bad_event_never_blocks_its_batch(tenant, only):
    seen: list[tuple[str, int]] = []

    def picky(event):
        if event.data["n"] == 2:
            raise ValueError("cannot handle this one")
        seen.append(("picky", event.data["n"]))

    register_fanout("picky", picky)
    register_fanout("batchy", lambda e: None,
                    batch=lambda events: seen.extend(("batchy", e.data["n"]) for e in events))
    events = _emit(tenant.org, 5)
    assert bus.drain() == 5

    # At least once: the batch ran before the isolating re-run (handlers are idempotent).
    assert sorted({n for name, n in seen if name == "picky"}) == [0, 1, 3, 4]
    assert sorted(n for name, n in seen if name == "batchy") == [0, 1, 2, 3, 4]
    bad = _row(events[2].pk)
    assert bad.dispatched_at is None
    assert bad.failed_handlers == ["picky"]  # only it runs again, after the backoff
    assert bad.next_dispatch_at is not None
    assert all(_row(e.pk).dispatched_at is not None for i, e in enumerate(events) if i != 2)


def test_a_failing_batch_handler_is_run_event_by_event(tenant, only):
    handled: list[int] = []

    def batch(events):
        for event in events:
            if event.data["n"] == 1:
                raise ValueError("poisoned")
            handled.append(event.data["n"])

    register_fanout("batchy", lambda e: batch([e]), batch=batch)
    events = _emit(tenant.org, 3)
    bus.drain()
    # The batch's writes were rolled back with its savepoint; event by event, 0 and 2 pass.
    assert handled[-2:] == [0, 2]
    assert _row(events[1].pk).failed_handlers == ["batchy"]
    assert _row(events[0].pk).dispatched_at is not None


def test_the_drain_grows_its_batches_with_the_backlog(tenant, only):
    sizes: list[int] = []
    register_fanout("sizes", lambda e: None, batch=lambda events: sizes.append(len(events)))
    _emit(tenant.org, 20)
    assert bus.drain() == 20
    assert sizes == [1, 2, 4, 8, 5]  # one row when idle, doubling while claims come back full
    _emit(tenant.org, 1)
    sizes.clear()
    bus.drain()
    assert sizes == [1]


@pytest.mark.parametrize("size", [5, 50])
def test_statements_per_batch_do_not_grow_with_its_size(size, tenant, other_tenant, settings):
    """The real handlers (feed, stream, webhooks with an endpoint in each organization,
    template counters) over one batch of events of two organizations."""
    from django.utils import timezone

    from platform_core.webhooks.services import endpoint_create

    settings.ALLOW_PRIVATE_WEBHOOK_TARGETS = True
    for org in (tenant.org, other_tenant.org):
        endpoint_create(organization=org, url="http://127.0.0.1:9/hook",
                        events=["conversation.created"])
    Event.objects.dangerously_unscoped().update(dispatched_at=timezone.now())
    with transaction.atomic():
        bus.emit_batch([(org, "conversation.created", {"conversation_id": f"cnv_{i}"})
                        for i in range(size) for org in (tenant.org, other_tenant.org)])
    with CaptureQueriesContext(connection) as queries:
        claimed, done = bus.dispatch_batch(1000)
    assert (claimed, done) == (2 * size, 2 * size)
    # The claim; a savepoint pair per handler (5: feed, stream, webhooks, template counters,
    # verify delivery tracking); the webhooks handler's endpoints read and deliveries
    # INSERT; the dispatched mark; the batch's savepoint pair. The same for 5 and 50.
    assert len(queries) == 16, [q["sql"][:80] for q in queries]
    from platform_core.webhooks.models import WebhookDelivery

    assert WebhookDelivery.objects.dangerously_unscoped().count() == 2 * size
