"""The send drain in batches (messaging/sending/drain.py, messaging/timed.py): one bad row
never blocks its batch, the statements per batch do not grow with its size, the batch size
follows the backlog, events keep their order per message, nothing is sent twice."""

from __future__ import annotations

from datetime import timedelta

import pytest
import time_machine
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from messaging import dispatcher, status, timed
from messaging.models import OptOut
from messaging.providers.base import ProviderError
from messaging.providers.sandbox import SandboxProvider
from messaging.sending import drain, journal
from platform_core.tenancy.context import tenant_context

from .conftest import SANDBOX_FAIL, load, message_events

pytestmark = pytest.mark.django_db

BOOM = "+14155550901"
FLAKY = "+14155550902"
STOPPED = "+14155550903"


def number(i: int) -> str:
    return f"+1415555{i:04d}"


@pytest.fixture
def accept(tenant, django_capture_on_commit_callbacks):
    """Accept sends through the API without running the dispatcher (its kick is dropped),
    so that a test drives the batches itself."""

    def do(recipients: list[str]) -> list[str]:
        client = tenant.client()
        ids = []
        with django_capture_on_commit_callbacks(execute=False):
            for to in recipients:
                response = client.post("/api/v1/messages", {"channel": "sms", "to": to,
                                                            "body": "hi"}, format="json")
                assert response.status_code == 202, response.content
                ids.append(response.json()["data"]["id"])
        return ids

    return do


@pytest.fixture
def provider_calls(monkeypatch):
    """Every sandbox provider call, by recipient; BOOM raises, FLAKY fails transiently."""
    calls: list[str] = []
    real = SandboxProvider.send

    def send(self, message, account):
        calls.append(message.to)
        if message.to == BOOM:
            raise RuntimeError("adapter bug")
        if message.to == FLAKY:
            raise ProviderError("503 from the carrier", retryable=True)
        return real(self, message, account)

    monkeypatch.setattr(SandboxProvider, "send", send)
    return calls


def one_batch(commit, limit: int = 500) -> dict[str, str]:
    with commit():
        claimed = drain.claim(limit)
        return drain.send(claimed.to_send)


def test_one_bad_row_never_blocks_the_batch(tenant, accept, commit, provider_calls):
    ids = accept([number(1), BOOM, FLAKY, STOPPED, SANDBOX_FAIL, number(2)])
    with tenant_context(tenant.org):  # a STOP between the acceptance and the send
        OptOut.objects.create(organization=tenant.org, sender=OptOut.ALL_SENDERS,
                              recipient=STOPPED, channel="sms", keyword="STOP")
    outcomes = one_batch(commit)
    assert outcomes == dict(zip(ids, ["sent", "failed", "retry", "failed", "failed", "sent"],
                                strict=True))
    rows = {m.to: m for m in (load(tenant, pk) for pk in ids)}
    assert rows[number(1)].status == rows[number(2)].status == "delivered"
    assert (rows[BOOM].status, rows[BOOM].error_code) == ("failed", "PROVIDER_ERROR")
    assert (rows[STOPPED].status, rows[STOPPED].error_code) == ("failed", "RECIPIENT_OPTED_OUT")
    assert (rows[SANDBOX_FAIL].status, rows[SANDBOX_FAIL].error_code) == ("failed", "30003")
    flaky = rows[FLAKY]
    assert (flaky.status, flaky.send_attempts, flaky.dispatched_at) == ("queued", 1, None)
    assert flaky.retry_at is not None
    assert STOPPED not in provider_calls  # refused before the provider
    assert sorted(provider_calls) == sorted([number(1), BOOM, FLAKY, SANDBOX_FAIL, number(2)])
    # The journal is cleared once the outcomes are stored.
    assert journal.read(ids) == {}


def test_a_row_the_batch_cannot_write_is_written_alone(tenant, accept, commit, monkeypatch):
    ids = accept([number(1), number(2), number(3)])
    real = status.message_event

    def broken(message, state=None, **kwargs):
        if message.pk == ids[1] and state == "sent":
            raise ValueError("cannot serialize")
        return real(message, state, **kwargs)

    monkeypatch.setattr(status, "message_event", broken)
    outcomes = one_batch(commit)
    assert outcomes == {ids[0]: "sent", ids[2]: "sent"}
    assert load(tenant, ids[0]).status == load(tenant, ids[2]).status == "delivered"
    stuck = load(tenant, ids[1])
    # Left claimed: the journal holds the provider's answer for the timed drain.
    assert (stuck.status, stuck.dispatched_at is not None) == ("queued", True)
    assert journal.read([ids[1]])[ids[1]]["status"] == "sent"
    monkeypatch.undo()
    lease = timezone.now() + timedelta(seconds=timed.dispatch_lease_seconds() + 1)
    with time_machine.travel(lease), commit():
        timed.messages_dispatch_due()
    settled = load(tenant, ids[1])
    assert settled.status == "delivered"
    assert settled.provider_message_id.startswith("SBX")


def _statements(accept, commit, django_capture_on_commit_callbacks, count: int,
                start: int) -> int:
    accept([number(start + i) for i in range(count)])
    with CaptureQueriesContext(connection) as queries, \
            django_capture_on_commit_callbacks(execute=False):  # the event fan-out aside
        claimed = drain.claim(500)
        drain.send(claimed.to_send)
    assert len(claimed.to_send) == count
    return len(queries)


def test_statements_per_batch_do_not_grow_with_its_size(
        tenant, accept, commit, django_capture_on_commit_callbacks, django_assert_num_queries):
    five = _statements(accept, commit, django_capture_on_commit_callbacks, 5, 100)
    accept([number(200 + i) for i in range(50)])
    with django_assert_num_queries(five), django_capture_on_commit_callbacks(execute=False):
        claimed = drain.claim(500)
        outcomes = drain.send(claimed.to_send)
    assert len(outcomes) == 50
    assert set(outcomes.values()) == {"sent"}


def test_timed_receipts_per_sweep_do_not_grow_with_the_batch(
        tenant, accept, commit, settings, django_capture_on_commit_callbacks):
    settings.MESSAGING_SANDBOX_RECEIPT_DELAY_SECONDS = 5
    counts = []
    for size, start in ((5, 300), (50, 400)):
        ids = accept([number(start + i) for i in range(size)])
        one_batch(commit)
        sent_at = load(tenant, ids[-1]).sent_at
        with time_machine.travel(sent_at + timedelta(seconds=6)), \
                CaptureQueriesContext(connection) as queries, \
                django_capture_on_commit_callbacks(execute=False):
            assert timed.messages_dispatch_due()["sandbox_receipts"] == size
        counts.append(len(queries))
        assert {load(tenant, pk).status for pk in ids} == {"delivered"}
    assert counts[0] == counts[1]


def test_the_batch_size_follows_the_backlog(tenant, accept, commit, monkeypatch):
    sizes = []
    real = drain.claim

    def spy(limit):
        sizes.append(limit)
        return real(limit)

    monkeypatch.setattr(drain, "claim", spy)
    accept([number(500)])
    with commit():
        assert dispatcher.dispatch_accepted() == 1
    assert sizes == [1, 4]  # idle: one message at once, then nothing left
    sizes.clear()
    ids = accept([number(600 + i) for i in range(30)])
    with commit():
        assert dispatcher.dispatch_accepted(batch=16) == 30
    assert sizes == [1, 4, 16, 16]  # a backlog: four times more after each full claim
    assert {load(tenant, pk).status for pk in ids} == {"delivered"}


def test_events_keep_their_order_and_nothing_is_sent_twice(tenant, accept, commit,
                                                           provider_calls):
    ids = accept([number(700 + i) for i in range(10)])
    one_batch(commit)
    assert one_batch(commit) == {}  # claimed once: a second drain finds nothing
    for pk in ids:
        assert [e.type for e in message_events(tenant, pk)] == [
            "message.queued", "message.sent", "message.delivered"]
    assert len(provider_calls) == len(set(provider_calls)) == 10
