"""Scheduled sends: send_at 1 minute to 35 days ahead, the beat sweep, cancel while
scheduled (0-conventions.md section 6), driven with time-machine."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
import time_machine
from django.utils import timezone

from messaging import services
from messaging.tasks import dispatch_due

from .conftest import USER, load, message_events

pytestmark = pytest.mark.django_db


def iso(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")


@pytest.fixture
def sweep(commit):
    """Travel to `moment` and run the beat job there (with its after-commit work)."""

    def run(moment: datetime):
        with time_machine.travel(moment, tick=True), commit():
            return dispatch_due()

    return run


def test_scheduled_message_is_sent_when_due(tenant, send, sweep):
    now = timezone.now()
    send_at = now + timedelta(minutes=10)
    response = send({"channel": "sms", "to": USER, "body": "Reminder", "send_at": iso(send_at)})
    assert response.status_code == 202, response.content
    data = response.json()["data"]
    assert data["status"] == "scheduled"
    assert datetime.fromisoformat(data["send_at"]) == send_at.replace(microsecond=0) or \
        abs(datetime.fromisoformat(data["send_at"]) - send_at) < timedelta(seconds=1)
    message_id = data["id"]
    assert [e.type for e in message_events(tenant, message_id)] == ["message.scheduled"]

    # Not yet: a minute before, the sweep leaves it alone.
    assert sweep(send_at - timedelta(minutes=1))["scheduled"] == 0
    assert load(tenant, message_id).status == "scheduled"
    # Due: queued, sent by the task, delivered by the sandbox receipt.
    counts = sweep(send_at + timedelta(seconds=5))
    assert counts["scheduled"] == 1
    message = load(tenant, message_id)
    assert message.status == "delivered"
    assert [e.type for e in message_events(tenant, message_id)] == [
        "message.scheduled", "message.queued", "message.sent", "message.delivered"]
    # Nothing is sent twice.
    assert sweep(send_at + timedelta(minutes=5))["scheduled"] == 0


@pytest.mark.parametrize(("offset", "ok"), [
    (timedelta(seconds=30), False),
    (timedelta(minutes=1, seconds=5), True),
    (timedelta(days=35) - timedelta(minutes=1), True),
    (timedelta(days=35, minutes=5), False),
    (-timedelta(hours=1), False),
])
def test_send_at_window(send, offset, ok):
    response = send({"channel": "sms", "to": USER, "body": "x",
                     "send_at": iso(timezone.now() + offset)})
    if ok:
        assert response.status_code == 202, response.content
        assert response.json()["data"]["status"] == "scheduled"
    else:
        assert response.status_code == 422, response.content
        error = response.json()["error"]
        assert error["code"] == "VALIDATION_ERROR"
        assert error["details"]["issues"][0]["field"] == "send_at"


@pytest.mark.parametrize("value", ["tomorrow", "2026-13-01T00:00:00Z", "12345"])
def test_send_at_must_be_iso_8601(send, value):
    response = send({"channel": "sms", "to": USER, "body": "x", "send_at": value})
    assert response.status_code == 422
    assert response.json()["error"]["details"]["issues"][0]["field"] == "send_at"


def test_send_at_with_offset_and_naive_utc(send):
    moment = timezone.now() + timedelta(hours=2)
    with_offset = moment.astimezone(timezone.get_fixed_timezone(-300)).isoformat()
    response = send({"channel": "sms", "to": USER, "body": "x", "send_at": with_offset})
    assert response.status_code == 202, response.content
    stored = datetime.fromisoformat(response.json()["data"]["send_at"].replace("Z", "+00:00"))
    assert abs((stored - moment).total_seconds()) < 1  # the same instant, not the wall time
    naive = moment.astimezone(UTC).replace(tzinfo=None).isoformat()
    response = send({"channel": "sms", "to": USER, "body": "x", "send_at": naive})
    assert response.status_code == 202, response.content
    stored = datetime.fromisoformat(response.json()["data"]["send_at"].replace("Z", "+00:00"))
    assert abs((stored - moment).total_seconds()) < 1  # naive means UTC


def test_cancel_while_scheduled(tenant, send, sweep, commit):
    send_at = timezone.now() + timedelta(minutes=5)
    message_id = send({"channel": "sms", "to": USER, "body": "x",
                       "send_at": iso(send_at)}).json()["data"]["id"]
    with commit():
        response = tenant.client().post(f"/api/v1/messages/{message_id}/cancel")
    assert response.status_code == 200, response.content
    data = response.json()["data"]
    assert data["status"] == "canceled"
    assert data["canceled_at"] is not None
    assert [e.type for e in message_events(tenant, message_id)] == [
        "message.scheduled", "message.canceled"]
    # A canceled message is never sent, and cannot be canceled again.
    assert sweep(send_at + timedelta(minutes=1))["scheduled"] == 0
    assert load(tenant, message_id).status == "canceled"
    again = tenant.client().post(f"/api/v1/messages/{message_id}/cancel")
    assert again.status_code == 409
    assert again.json()["error"]["code"] == "CONFLICT"
    assert again.json()["error"]["details"]["status"] == "canceled"


def test_cancel_after_sending_is_409(tenant, send):
    message_id = send({"channel": "sms", "to": USER, "body": "x"}).json()["data"]["id"]
    response = tenant.client().post(f"/api/v1/messages/{message_id}/cancel")
    assert response.status_code == 409
    assert response.json()["error"]["code"] == "CONFLICT"
    assert response.json()["error"]["details"]["status"] == "delivered"


def test_cancel_unknown_message_is_404(tenant):
    response = tenant.client().post("/api/v1/messages/msg_UNKNOWN/cancel")
    assert response.status_code == 404


def test_a_send_whose_drain_signal_was_lost_is_sent_by_the_sweep(tenant, send, sweep,
                                                                monkeypatch):
    """The broker was down when the send was accepted: the beat's drain sends it later."""
    from messaging import tasks

    monkeypatch.setattr(tasks.dispatch_accepted, "delay", lambda *a: (_ for _ in ()).throw(
        ConnectionError("broker down")))
    message_id = send({"channel": "sms", "to": USER, "body": "x"}).json()["data"]["id"]
    assert load(tenant, message_id).status == "queued"
    monkeypatch.undo()
    assert sweep(timezone.now() + timedelta(seconds=10))["dispatched"] == 1
    assert load(tenant, message_id).status == "delivered"
    assert [e.type for e in message_events(tenant, message_id)] == [
        "message.queued", "message.sent", "message.delivered"]


def test_duplicate_task_sends_once(tenant, send, commit):
    message_id = send({"channel": "sms", "to": USER, "body": "x"}).json()["data"]["id"]
    with commit():
        assert services.message_dispatch(message_id=message_id) == "skipped"
    assert [e.type for e in message_events(tenant, message_id)].count("message.sent") == 1
