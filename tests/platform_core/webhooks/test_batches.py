"""The delivery drain's batches: the per-endpoint cap, a bad row in a batch, and the
statements per batch (constant whatever its size)."""

from __future__ import annotations

import threading
import time

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from platform_core.events.bus import emit_batch
from platform_core.tenancy.context import tenant_context
from platform_core.webhooks import delivery, engine, services
from platform_core.webhooks.models import WebhookDelivery

from .conftest import deliveries
from .receivers import start_receiver

pytestmark = pytest.mark.django_db


@pytest.fixture
def second_receiver(private_targets):
    r = start_receiver()
    yield r
    r.close()


def _emit_many(tenant, count: int, django_capture_on_commit_callbacks, type_="message.sent"):
    with django_capture_on_commit_callbacks(execute=True), transaction.atomic():
        return emit_batch([(tenant.org, type_, {"message_id": f"msg_{i}"})
                           for i in range(count)])


def test_a_slow_endpoint_holds_only_its_own_capped_slots(
        tenant, receiver, second_receiver, make_endpoint, settings,
        django_capture_on_commit_callbacks):
    settings.WEBHOOK_ENDPOINT_CONCURRENCY = 3
    slow, fast = receiver, second_receiver
    slow.mode = "held"  # the slow endpoint answers only once the fast one is served in full
    make_endpoint(slow.url, events=["message.sent"])
    make_endpoint(fast.url, events=["message.sent"])
    seen_while_held: dict[str, int] = {}

    def release_slow_once_fast_is_served() -> None:
        for _ in range(600):
            if len(fast.delivered_event_ids()) == 12:
                break
            time.sleep(0.1)
        seen_while_held.update(fast=len(fast.delivered_event_ids()),
                               slow_answered=len(slow.delivered_event_ids()),
                               slow_held=slow.in_flight())
        slow.release.set()

    watcher = threading.Thread(target=release_slow_once_fast_is_served, daemon=True)
    watcher.start()
    events = _emit_many(tenant, 12, django_capture_on_commit_callbacks)
    watcher.join(timeout=70)

    ids = sorted(e.pk for e in events)
    assert sorted(fast.delivered_event_ids()) == ids
    assert sorted(slow.delivered_event_ids()) == ids
    # Never more than the cap in flight at the slow receiver...
    assert slow.max_in_flight == 3
    # ...and the fast one was served in full while the slow one held its first capped batch
    # unanswered: no head-of-line blocking (an event, not a clock, decides).
    assert seen_while_held == {"fast": 12, "slow_answered": 0, "slow_held": 3}
    assert {r.status for r in deliveries(tenant)} == {"succeeded"}


def test_one_bad_row_never_blocks_its_batch(tenant, receiver, second_receiver, make_endpoint,
                                             django_capture_on_commit_callbacks):
    good = make_endpoint(receiver.url, events=["message.sent"])
    broken = make_endpoint(second_receiver.url, events=["message.sent"])
    # A secret that no longer decrypts (a key dropped from the rotation, say).
    with connection.cursor() as cursor:
        cursor.execute("UPDATE webhooks_webhookendpoint SET secret = 'garbage' WHERE id = %s",
                       [broken["id"]])
    events = _emit_many(tenant, 5, django_capture_on_commit_callbacks)

    assert sorted(receiver.delivered_event_ids()) == sorted(e.pk for e in events)
    assert second_receiver.requests == []
    with tenant_context(tenant.org):
        bad = list(WebhookDelivery.objects.filter(endpoint_id=broken["id"]))
        ok = list(WebhookDelivery.objects.filter(endpoint_id=good["id"]))
    assert {r.status for r in ok} == {"succeeded"}
    assert len(bad) == 5
    for row in bad:  # a failed attempt, on the retry schedule like any other
        assert (row.status, row.attempts, row.claim_token) == ("pending", 1, "")
        assert row.last_error.startswith("internal_error")
        assert row.next_retry_at is not None


def test_a_batch_whose_bulk_write_fails_is_recorded_row_by_row(
        tenant, receiver, make_endpoint, monkeypatch, django_capture_on_commit_callbacks):
    make_endpoint(receiver.url, events=["message.sent"])
    real = delivery._apply_attempt
    poisoned: list[str] = []

    def apply(row, outcome, now):
        if not poisoned:
            poisoned.append(row.pk)
        if row.pk == poisoned[0]:
            raise ValueError("this row cannot be written")
        return real(row, outcome, now)

    monkeypatch.setattr(delivery, "_apply_attempt", apply)
    _emit_many(tenant, 6, django_capture_on_commit_callbacks)

    rows = {r.pk: r for r in deliveries(tenant)}
    assert len(rows) == 6
    stuck = rows.pop(poisoned[0])
    assert {r.status for r in rows.values()} == {"succeeded"}  # the rest of the batch
    # The bad one keeps its claim: it is due again when its lease ends.
    assert (stuck.status, stuck.attempts) == ("pending", 0)
    assert stuck.claim_token != ""


def _statements(fn) -> int:
    with CaptureQueriesContext(connection) as queries:
        fn()
    return len(queries)


@pytest.mark.parametrize("size", [4, 40])
def test_statements_per_batch_do_not_grow_with_its_size(
        size, tenant, receiver, make_endpoint, monkeypatch, django_capture_on_commit_callbacks,
        settings):
    settings.WEBHOOK_ENDPOINT_CONCURRENCY = 100
    receiver.mode = "500"  # every attempt recorded as a retry: the fullest write-back
    make_endpoint(receiver.url, events=["message.sent"])
    monkeypatch.setattr(services.DRAIN, "kick", lambda: None)
    _emit_many(tenant, size, django_capture_on_commit_callbacks)
    assert len(deliveries(tenant)) == size

    claimed: list[tuple[list[str], str]] = []
    claim_count = _statements(lambda: claimed.append(engine.claim(delivery.SOURCE, 1000)))
    ids, token = claimed[0]
    assert len(ids) == size
    jobs: list[engine.Job] = []
    prepare_count = _statements(lambda: jobs.extend(delivery.SOURCE.prepare(ids, token, 1e12)))
    finished = [(job, job.send()) for job in jobs]
    record_count = _statements(lambda: engine._record(delivery.SOURCE, finished))

    assert {r.attempts for r in deliveries(tenant)} == {1}
    # claim: keys + lease (and a savepoint pair); prepare: one read; record: lock-read,
    # deliveries UPDATE, attempts INSERT, the breaker's two endpoint UPDATEs and the
    # disable check, in a savepoint pair.
    assert (claim_count, prepare_count, record_count) == (4, 1, 8)
