"""The outbox: an API send only stores the message; the batch dispatcher announces it
(`message.queued` / `message.scheduled`) and sends it in a batch (messaging/dispatcher.py)."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta

import pytest
from django.core.cache import cache

from messaging import dispatcher
from messaging.services import messages_dispatch_due

from .conftest import USER, USER_2, load, message_events

pytestmark = pytest.mark.django_db


def test_a_send_is_stored_in_one_statement_and_announced_after_commit(
    tenant, django_assert_num_queries, django_capture_on_commit_callbacks
):
    client = tenant.client()
    client.post("/api/v1/messages", {"channel": "sms", "to": USER_2, "body": "warm"},
                format="json")  # the credential snapshot is cached from here on
    # One statement: the INSERT carries the opt-out check and the contact lookup.
    with (django_assert_num_queries(1) as captured,
          django_capture_on_commit_callbacks(execute=False) as callbacks):
        response = client.post("/api/v1/messages",
                               {"channel": "sms", "to": USER, "body": "hi"}, format="json")
    assert response.status_code == 202
    assert captured.captured_queries[-1]["sql"].startswith('INSERT INTO "messaging_message"')
    message_id = response.json()["data"]["id"]
    assert load(tenant, message_id).announced_at is None
    assert message_events(tenant, message_id) == []
    with django_capture_on_commit_callbacks(execute=True):
        for callback in callbacks:  # the kick: eager Celery runs the dispatcher here
            callback()
    message = load(tenant, message_id)
    assert message.announced_at is not None
    assert [e.type for e in message_events(tenant, message_id)][:2] == [
        "message.queued", "message.sent"]


def test_the_sweep_announces_a_message_whose_kick_was_lost(
    tenant, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=False):  # the kick never runs
        response = tenant.client().post(
            "/api/v1/messages", {"channel": "sms", "to": USER, "body": "hi"}, format="json")
    message_id = response.json()["data"]["id"]
    with django_capture_on_commit_callbacks(execute=True):
        counts = messages_dispatch_due()
    assert counts["dispatched"] == 1
    assert message_events(tenant, message_id)[0].type == "message.queued"
    assert load(tenant, message_id).status in ("sent", "delivered")


def test_a_cancel_before_the_dispatcher_still_comes_after_the_acceptance_event(
    tenant, django_capture_on_commit_callbacks
):
    client = tenant.client()
    when = (datetime.now(UTC) + timedelta(days=2)).isoformat()
    with django_capture_on_commit_callbacks(execute=False):  # the dispatcher does not run
        response = client.post("/api/v1/messages", {
            "channel": "sms", "to": USER, "body": "later", "send_at": when,
        }, format="json")
    assert response.status_code == 202, response.content
    assert load(tenant, response.json()["data"]["id"]).announced_at is None
    message_id = response.json()["data"]["id"]
    with django_capture_on_commit_callbacks(execute=True):
        assert client.post(f"/api/v1/messages/{message_id}/cancel").status_code == 200
        assert dispatcher.dispatch_accepted() == 0  # the cancel announced it already
    assert [e.type for e in message_events(tenant, message_id)] == [
        "message.scheduled", "message.canceled"]


def test_kicks_queue_one_dispatcher_until_it_runs(monkeypatch, settings):
    from messaging import tasks

    queued = []
    monkeypatch.setattr(tasks.dispatch_accepted, "delay", lambda: queued.append(1))
    cache.delete(dispatcher.PENDING_FLAG)
    for _ in range(5):
        dispatcher._queue_dispatcher()
    assert queued == [1]  # the flag stands for the queued run
    dispatcher.dispatch_accepted()  # deletes the flag before claiming
    dispatcher._queue_dispatcher()
    assert queued == [1, 1]


def test_outside_eager_mode_the_request_only_wakes_the_kicker_thread(monkeypatch, settings):
    from messaging import tasks

    settings.CELERY_TASK_ALWAYS_EAGER = False
    done = threading.Event()
    callers = []

    def delay():
        callers.append(threading.current_thread().name)
        done.set()

    monkeypatch.setattr(tasks.dispatch_accepted, "delay", delay)
    cache.delete(dispatcher.PENDING_FLAG)
    dispatcher.kick()
    assert done.wait(5), "the kicker thread never queued the dispatcher"
    assert callers == ["messaging-dispatch-kicker"]  # not the request's thread
