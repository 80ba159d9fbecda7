"""FIFO per (endpoint, subject): a message's events reach a receiver in the order they
were emitted, one at a time, while different messages still go out concurrently under the
endpoint's cap; a retrying delivery holds the later ones of its message only."""

from __future__ import annotations

import pytest
from django.db import transaction

from platform_core.events.bus import emit_batch
from platform_core.webhooks import services
from platform_core.webhooks.services import event_subject

from .conftest import deliveries

pytestmark = pytest.mark.django_db

STEPS = ["message.queued", "message.sending", "message.sent", "message.delivered",
         "message.read"]


def _emit_lifecycles(tenant, messages: list[str], steps: slice,
                     django_capture_on_commit_callbacks) -> None:
    """One transaction per step, every message moving at once (as a status batch does)."""
    for step in range(len(STEPS))[steps]:
        event_type = STEPS[step]
        with django_capture_on_commit_callbacks(execute=True), transaction.atomic():
            emit_batch([(tenant.org, event_type, {"message_id": m, "step": step})
                        for m in messages])


def _received_steps(receiver) -> dict[str, list[int]]:
    by_message: dict[str, list[int]] = {}
    for request in sorted(receiver.requests, key=lambda r: r.at):
        data = request.json["data"]
        by_message.setdefault(data["message_id"], []).append(data["step"])
    return by_message


def test_each_message_reaches_a_concurrent_receiver_in_order(
        tenant, receiver, make_endpoint, settings, monkeypatch,
        django_capture_on_commit_callbacks):
    settings.WEBHOOK_ENDPOINT_CONCURRENCY = 4
    receiver.mode = "slow:0.03"
    make_endpoint(receiver.url, events=STEPS)
    monkeypatch.setattr(services.DRAIN, "kick", lambda: None)  # the whole backlog at once
    messages = [f"msg_order{i}" for i in range(8)]
    _emit_lifecycles(tenant, messages, slice(None), django_capture_on_commit_callbacks)
    rows = deliveries(tenant)
    assert len(rows) == 40
    assert {r.subject for r in rows} == set(messages)

    assert services.deliveries_dispatch_due() == 40

    assert _received_steps(receiver) == {m: list(range(len(STEPS))) for m in messages}
    assert all(r.answered for r in receiver.requests)
    # Concurrent across messages, never beyond the cap.
    assert 1 < receiver.max_in_flight <= 4
    assert {r.status for r in deliveries(tenant)} == {"succeeded"}


@pytest.fixture
def one_retry_endpoint(receiver, make_endpoint, settings, monkeypatch):
    """An endpoint of the lifecycle events, one retry 30 s after a failure; drained below."""
    settings.WEBHOOK_RETRY_SCHEDULE = "30"
    settings.WEBHOOK_RETRY_JITTER = 0
    monkeypatch.setattr(services.DRAIN, "kick", lambda: None)
    return make_endpoint(receiver.url, events=STEPS)


def test_a_retrying_delivery_holds_only_its_own_message(
        tenant, receiver, one_retry_endpoint, run_due, django_capture_on_commit_callbacks):
    _emit_lifecycles(tenant, ["msg_a"], slice(0, 1), django_capture_on_commit_callbacks)
    receiver.queue.append("500")  # msg_a's first event fails once
    assert services.deliveries_dispatch_due() == 1
    _emit_lifecycles(tenant, ["msg_a", "msg_b"], slice(1, 3),
                     django_capture_on_commit_callbacks)

    assert services.deliveries_dispatch_due() == 2  # msg_b's two; msg_a's wait in line
    assert _received_steps(receiver) == {"msg_a": [0], "msg_b": [1, 2]}
    assert run_due(31) == 3  # msg_a's retry succeeds, then its later events, in order
    assert _received_steps(receiver) == {"msg_a": [0, 0, 1, 2], "msg_b": [1, 2]}


def test_a_given_up_delivery_lets_the_next_one_go(
        tenant, receiver, one_retry_endpoint, run_due, django_capture_on_commit_callbacks):
    _emit_lifecycles(tenant, ["msg_a"], slice(0, 2), django_capture_on_commit_callbacks)
    receiver.queue.extend(["500", "500"])
    assert services.deliveries_dispatch_due() == 1
    assert run_due(31) == 2  # the last attempt fails (dead-lettered), the next one goes
    assert _received_steps(receiver) == {"msg_a": [0, 0, 1]}
    assert [r.status for r in deliveries(tenant)] == ["failed", "succeeded"]


def test_event_subject_names_the_resource_an_event_is_about():
    assert event_subject("message.sent", {"message_id": "msg_1"}) == "msg_1"
    assert event_subject("conversation.created", {"conversation_id": "con_1"}) == "con_1"
    assert event_subject("contact.updated", {"contact": {"id": "cnt_1"}}) == "cnt_1"
    assert event_subject("webhook.endpoint.disabled", {"id": "whk_1"}) == "whk_1"
    assert event_subject("webhook.delivery.exhausted", {"delivery_id": "dlv_1"}) is None
    assert event_subject("account.ping", {}) is None
