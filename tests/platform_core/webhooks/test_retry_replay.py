"""Retry, replay and the dead-letter queue: the state table of Document 1, 3.1."""

from __future__ import annotations

from datetime import timedelta

import pytest
import time_machine
from django.utils import timezone

from platform_core.tenancy.context import tenant_context
from platform_core.webhooks.models import WebhookDelivery

from .conftest import deliveries

pytestmark = pytest.mark.django_db


@pytest.fixture
def failed(tenant, receiver, make_endpoint, emit, settings):
    """One delivery failed after its (short) schedule; the receiver then recovers."""
    settings.WEBHOOK_RETRY_SCHEDULE = [1]
    settings.WEBHOOK_RETRY_JITTER = 0
    endpoint = make_endpoint(receiver.url, events=["message.failed"])
    receiver.mode = "500"
    event = emit(tenant, "message.failed", {"message_id": "msg_9", "error_code": "30007"})
    receiver.queue.clear()
    # Exhaust: one retry slot, then failed.
    with time_machine.travel(timezone.now() + timedelta(seconds=2), tick=True):
        from platform_core.webhooks.services import deliveries_dispatch_due

        deliveries_dispatch_due()
    row = deliveries(tenant)[0]
    assert row.status == "failed"
    receiver.mode = "ok"
    return endpoint, row, event


def _url(endpoint, row, action=""):
    base = f"/api/v1/webhooks/{endpoint['id']}/deliveries/{row.pk}"
    return f"{base}/{action}" if action else base


def test_retry_failed_goes_pending_now_payload_unchanged(tenant, failed, run_due, receiver):
    endpoint, row, event = failed
    before = timezone.now()
    response = tenant.client().post(_url(endpoint, row, "retry"))
    assert response.status_code == 202, response.content
    data = response.json()["data"]
    assert data["status"] == "pending"
    assert data["dead_lettered"] is False
    assert before <= timezone.datetime.fromisoformat(data["next_retry_at"]) <= timezone.now()
    after = deliveries(tenant)[0]
    assert after.payload == row.payload
    assert after.event_id == row.event_id == event.pk
    # The worker picks it up on its next tick.
    assert run_due(0) == 1
    assert receiver.delivered_event_ids() == [event.pk]
    assert deliveries(tenant)[0].status == "succeeded"


@pytest.mark.parametrize("state", ["pending", "succeeded"])
def test_retry_and_replay_of_a_not_failed_delivery_conflict(tenant, failed, state):
    endpoint, row, _event = failed
    with tenant_context(tenant.org):
        WebhookDelivery.objects.filter(pk=row.pk).update(status=state)
    for action in ("retry", "replay"):
        response = tenant.client().post(_url(endpoint, row, action))
        assert response.status_code == 409, (action, response.content)
        assert response.json()["error"]["code"] == "CONFLICT"
    assert tenant.client().post(f"/api/v1/webhooks/dlq/{row.pk}/replay").status_code == 409
    assert deliveries(tenant)[0].status == state


def test_replay_creates_a_new_delivery_under_a_fresh_event_id(tenant, failed, receiver,
                                                               django_capture_on_commit_callbacks):
    endpoint, row, event = failed
    with django_capture_on_commit_callbacks(execute=True):
        response = tenant.client().post(_url(endpoint, row, "replay"))
    assert response.status_code == 202, response.content
    data = response.json()["data"]
    replay_event_id = data["replay_event_id"]
    assert replay_event_id.startswith("evt_")
    assert replay_event_id != event.pk
    # The original is unchanged.
    original = deliveries(tenant, pk=row.pk)[0]
    assert original.status == "failed"
    assert original.attempts == row.attempts
    # The replay went out at once (same type and payload, fresh id) and arrived.
    new = deliveries(tenant, event_id=replay_event_id)[0]
    assert new.pk == data["replay_delivery_id"]
    assert new.replay_of_id == row.pk
    assert new.event_type == "message.failed"
    got = receiver.requests[-1]
    assert got.answered
    assert got.json["id"] == replay_event_id
    assert got.json["type"] == "message.failed"
    assert got.json["data"] == event.envelope()["data"]
    assert got.headers["webhook-id"] == replay_event_id
    # Listed under its new event id.
    listed = tenant.client().get(
        f"/api/v1/webhooks/{endpoint['id']}/deliveries?event_id={replay_event_id}").json()
    assert [d["id"] for d in listed["data"]] == [new.pk]
    assert listed["data"][0]["replay_of"] == row.pk


def test_replay_after_seven_days_is_refused(tenant, failed):
    endpoint, row, _event = failed
    with time_machine.travel(timezone.now() + timedelta(days=7, minutes=1), tick=True):
        response = tenant.client().post(_url(endpoint, row, "replay"))
        dlq = tenant.client().post(f"/api/v1/webhooks/dlq/{row.pk}/replay")
    assert response.status_code == 422
    assert response.json()["error"]["code"] == "REPLAY_WINDOW_EXPIRED"
    assert dlq.status_code == 422
    assert len(deliveries(tenant)) == 1
    # Inside the window it still works.
    with time_machine.travel(timezone.now() + timedelta(days=6, hours=23), tick=True):
        assert tenant.client().post(_url(endpoint, row, "replay")).status_code == 202


def test_dlq_list_and_replay(tenant, other_tenant, failed, receiver,
                             django_capture_on_commit_callbacks):
    endpoint, row, event = failed
    listed = tenant.client().get("/api/v1/webhooks/dlq").json()
    assert [d["id"] for d in listed["data"]] == [row.pk]
    assert listed["data"][0]["dead_lettered"] is True
    assert tenant.client().get(f"/api/v1/webhooks/dlq/{row.pk}").status_code == 200
    assert other_tenant.client().get("/api/v1/webhooks/dlq").json()["data"] == []
    assert other_tenant.client().post(f"/api/v1/webhooks/dlq/{row.pk}/replay").status_code == 404
    assert tenant.client().post("/api/v1/webhooks/dlq/dlv_UNKNOWN/replay").status_code == 404

    with django_capture_on_commit_callbacks(execute=True):
        response = tenant.client().post(f"/api/v1/webhooks/dlq/{row.pk}/replay")
    assert response.status_code == 202
    replay_event_id = response.json()["data"]["replay_event_id"]
    assert replay_event_id != event.pk
    assert receiver.delivered_event_ids() == [replay_event_id]


def test_delivery_list_filters_and_query_count(tenant, receiver, make_endpoint, emit,
                                               django_assert_max_num_queries):
    endpoint = make_endpoint(receiver.url, events=["*"])
    a = emit(tenant, "message.delivered")
    b = emit(tenant, "message.failed")
    c = emit(tenant, "conversation.created")
    url = f"/api/v1/webhooks/{endpoint['id']}/deliveries"
    client = tenant.client()

    def ids(query):
        return [d["event_id"] for d in client.get(url + query).json()["data"]]

    all_events = ids("")
    assert {a.pk, b.pk, c.pk} <= set(all_events)
    assert ids(f"?event_id={b.pk}") == [b.pk]
    assert sorted(ids(f"?event_id={a.pk},{c.pk}")) == sorted([a.pk, c.pk])
    assert ids("?type=message.failed") == [b.pk]
    assert sorted(ids("?type=message.failed&type=conversation.created")) == sorted([b.pk, c.pk])
    assert sorted(ids("?type=message.failed,message.delivered")) == sorted([a.pk, b.pk])
    assert ids("?type=message.failed&event_id=" + a.pk) == []

    first = client.get(url + "?limit=2").json()
    assert first["meta"]["pagination"]["has_more"] is True
    rest = client.get(url + f"?limit=2&cursor={first['meta']['pagination']['cursor']}").json()
    assert len(first["data"]) + len(rest["data"]) == len(all_events)
    for row in first["data"] + rest["data"]:
        assert "request_headers" in row
        assert "response_headers" in row
    with django_assert_max_num_queries(4):
        client.get(url)
    # An altered cursor answers 400.
    bad = client.get(url + "?limit=2&cursor=abc")
    assert bad.status_code == 400
    # Unknown endpoint: 404; unknown delivery: 404.
    assert client.get("/api/v1/webhooks/whk_NOPE/deliveries").status_code == 404
    assert client.get(url + "/dlv_NOPE").status_code == 404
