"""The inbox (Document 2, 2.5 and 4.8): record, list filters with a constant query count,
thread oldest first, activity feed, lifecycle verbs, tags, priority, events."""

from __future__ import annotations

from datetime import timedelta

import pytest
import time_machine
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from conversations.models import Conversation
from conversations.services import conversations_wake_due
from platform_core.events.models import Event

from .conftest import CONVERSATIONS, contact, url

pytestmark = pytest.mark.django_db


def ids(response) -> list[str]:
    assert response.status_code == 200, response.content
    return [row["id"] for row in response.json()["data"]]


def event_types(tenant, conversation_id: str) -> list[str]:
    return [e.type for e in Event.objects.for_organization(tenant.org).order_by("created_at")
            if e.data.get("id") == conversation_id]


def test_inbound_fills_the_record(tenant, inbound):
    contact(tenant, first_name="Ada", email="ada@example.com")
    message = inbound("This is great, thanks!")
    inbound("Also, one more thing")
    data = tenant.client().get(url(message["conversation_id"])).json()["data"]
    assert data["status"] == "open"
    assert data["channel"] == "sms"
    assert data["unread"] is True
    assert data["unread_count"] == 2
    assert data["contact"] == {"id": message["contact_id"], "name": "Ada",
                               "phone": "+14155550123", "email": "ada@example.com"}
    assert data["last_message"]["preview"] == "Also, one more thing"
    assert data["last_message"]["direction"] == "inbound"
    assert data["sentiment"] == "neutral"  # the latest inbound message's
    assert data["priority"] == "none"
    assert data["tags"] == []
    assert data["ai_led"] is False
    assert data["queue"] is None
    assert data["waiting_since"] is not None


def test_list_filters(tenant, inbound):
    client = tenant.client()
    angry = inbound("This is terrible, I want a refund", sender="+14155550101")
    happy = inbound("Great service, thank you", sender="+14155550102")
    other = inbound("Hello there", sender="+14155550103", channel="whatsapp")
    contact(tenant, phone="+14155550104", first_name="Grace")
    grace = inbound("Question about billing", sender="+14155550104")
    a, h, o, g = (m["conversation_id"] for m in (angry, happy, other, grace))
    assert ids(client.get(CONVERSATIONS, {"sentiment": "negative"})) == [a]
    assert ids(client.get(CONVERSATIONS, {"sentiment": "positive"})) == [h]
    assert ids(client.get(CONVERSATIONS, {"channel": "whatsapp"})) == [o]
    assert client.put(url(h, "/priority"), {"priority": "urgent"},
                      format="json").status_code == 200
    assert ids(client.get(CONVERSATIONS, {"priority": "urgent"})) == [h]
    assert client.post(url(a, "/read")).status_code == 200
    assert set(ids(client.get(CONVERSATIONS, {"unread": "true"}))) == {h, o, g}
    assert ids(client.get(CONVERSATIONS, {"unread": "false"})) == [a]
    assert client.post(url(o, "/assign"), {"agent_id": tenant.owner.pk},
                       format="json").status_code == 200
    assert ids(client.get(CONVERSATIONS, {"has_agent": "true"})) == [o]
    assert set(ids(client.get(CONVERSATIONS, {"has_agent": "false"}))) == {a, h, g}
    # search: contact name, phone, email and message text
    assert ids(client.get(CONVERSATIONS, {"search": "grace"})) == [g]
    assert ids(client.get(CONVERSATIONS, {"search": "550102"})) == [h]
    assert ids(client.get(CONVERSATIONS, {"search": "refund"})) == [a]
    assert ids(client.get(CONVERSATIONS, {"search": "refund", "status": "closed"})) == []
    for bad in ({"status": "pending"}, {"unread": "maybe"}, {"priority": "x"},
                {"sentiment": "meh"}, {"has_agent": "2"}, {"search": "x" * 201}):
        response = client.get(CONVERSATIONS, bad)
        assert response.status_code == 400, bad
        assert response.json()["error"]["code"] == "VALIDATION_ERROR"


def test_list_pages_with_a_constant_query_count(tenant, inbound):
    client = tenant.client()
    for n in range(3):
        inbound(f"hi {n}", sender=f"+1415555020{n}")
    params = {"status": "open", "channel": "sms", "unread": "true"}
    with CaptureQueriesContext(connection) as small:
        assert len(ids(client.get(CONVERSATIONS, params))) == 3
    for n in range(3, 12):
        inbound(f"hi {n}", sender=f"+141555502{n:02d}")
    with CaptureQueriesContext(connection) as large:
        assert len(ids(client.get(CONVERSATIONS, params))) == 12
    # Credential and rate checks are cached; the page is one query plus one for contacts,
    # whatever the number of rows.
    assert len(large.captured_queries) == len(small.captured_queries) == 2
    first = client.get(CONVERSATIONS, {**params, "limit": 5})
    body = first.json()
    assert body["meta"]["pagination"]["has_more"] is True
    seen = ids(first)
    cursor = body["meta"]["pagination"]["cursor"]
    while cursor:
        page = client.get(CONVERSATIONS, {**params, "limit": 5, "cursor": cursor})
        seen += ids(page)
        cursor = page.json()["meta"]["pagination"]["cursor"]
    assert len(seen) == len(set(seen)) == 12
    # A cursor is bound to its filters.
    assert client.get(CONVERSATIONS, {"limit": 5, "cursor": body["meta"]["pagination"][
        "cursor"]}).json()["error"]["code"] == "INVALID_CURSOR"


def test_thread_oldest_first_with_participant_filter(tenant, inbound, commit):
    client = tenant.client()
    first = inbound("first")
    cid = first["conversation_id"]
    with commit():
        reply = client.post(url(cid, "/messages"), {"body": "reply"}, format="json")
    assert reply.status_code == 202, reply.content
    inbound("third")
    thread = client.get(url(cid, "/messages")).json()["data"]
    assert [m["body"] for m in thread] == ["first", "reply", "third"]
    assert [m["direction"] for m in thread] == ["inbound", "outbound", "inbound"]
    assert thread[0]["participant_id"] == first["contact_id"]
    assert thread[0]["from"] == "+14155550123"
    assert thread[1]["to"] == "+14155550123"
    assert thread[1]["participant_id"] == tenant.key.pk  # the caller (an API key)
    mine = client.get(url(cid, "/messages"), {"participant_id": first["contact_id"]})
    assert [m["body"] for m in mine.json()["data"]] == ["first", "third"]
    paged = client.get(url(cid, "/messages"), {"limit": 2}).json()
    assert [m["body"] for m in paged["data"]] == ["first", "reply"]


def test_lifecycle_verbs_activity_and_events(tenant, inbound):
    client = tenant.client()
    cid = inbound("hello")["conversation_id"]
    closed = client.post(url(cid, "/close"))
    assert closed.status_code == 200
    assert closed.json()["data"]["status"] == "closed"
    again = client.post(url(cid, "/close"))
    assert again.status_code == 409
    assert again.json()["error"]["code"] == "CONFLICT"
    assert client.post(url(cid, "/reopen")).json()["data"]["status"] == "open"
    assert client.post(url(cid, "/reopen")).status_code == 409
    until = (timezone.now() + timedelta(hours=1)).isoformat()
    snoozed = client.post(url(cid, "/snooze"), {"until": until}, format="json")
    assert snoozed.json()["data"]["status"] == "snoozed"
    assert snoozed.json()["data"]["snoozed_until"] is not None
    past = client.post(url(cid, "/snooze"), {"until": "2001-01-01T00:00:00Z"}, format="json")
    assert past.status_code == 422
    escalated = client.post(url(cid, "/escalate"), {"reason": "VIP"}, format="json")
    assert escalated.json()["data"]["priority"] == "high"
    assert escalated.json()["data"]["escalated_at"] is not None
    tags = client.put(url(cid, "/tags"), {"tags": ["vip", " billing ", "vip"]}, format="json")
    assert tags.json()["data"]["tags"] == ["vip", "billing"]
    assert client.put(url(cid, "/tags"), {"tags": ["x"]}, format="json").json()["data"][
        "tags"] == ["x"]
    assert client.put(url(cid, "/tags"), {"tags": "x"}, format="json").status_code in (400,
                                                                                        422)
    assert client.patch(url(cid), {"status": "closed"}, format="json").status_code == 405
    kinds = [row["kind"] for row in client.get(url(cid, "/activity")).json()["data"]]
    assert kinds == ["tags_changed", "tags_changed", "escalated", "snoozed", "reopened",
                     "closed", "created"]
    types = event_types(tenant, cid)
    for expected in ("conversation.created", "conversation.closed", "conversation.reopened",
                     "conversation.snoozed", "conversation.escalated", "conversation.updated"):
        assert expected in types


def test_snooze_is_woken_by_the_periodic_job_or_an_inbound_message(tenant, inbound):
    client = tenant.client()
    cid = inbound("hello")["conversation_id"]
    until = timezone.now() + timedelta(minutes=30)
    client.post(url(cid, "/snooze"), {"until": until.isoformat()}, format="json")
    assert conversations_wake_due() == 0
    with time_machine.travel(until + timedelta(seconds=1)):
        assert conversations_wake_due() == 1
    assert client.get(url(cid)).json()["data"]["status"] == "open"
    # An inbound message wakes a snoozed thread (it continues the same thread).
    client.post(url(cid, "/snooze"), {"until": until.isoformat()}, format="json")
    assert inbound("back again")["conversation_id"] == cid
    assert client.get(url(cid)).json()["data"]["status"] == "open"


def test_closed_thread_then_inbound_opens_a_new_one(tenant, inbound):
    client = tenant.client()
    cid = inbound("hello")["conversation_id"]
    client.post(url(cid, "/close"))
    new = inbound("hello again")["conversation_id"]
    assert new != cid
    # The old one cannot be reopened while the pair has a live thread.
    response = client.post(url(cid, "/reopen"))
    assert response.status_code == 409
    assert response.json()["error"]["details"]["conversation_id"] == new


def test_sentiment_timeline_and_prediction(tenant, inbound):
    client = tenant.client()
    cid = inbound("Great, thanks")["conversation_id"]
    inbound("Hmm ok")
    inbound("This is terrible and broken, awful")
    timeline = client.get(url(cid, "/sentiment")).json()["data"]
    assert [p["label"] for p in timeline["points"]] == ["positive", "neutral", "negative"]
    assert timeline["current"] == "negative"
    first = client.get(url(cid, "/prediction")).json()["data"]
    assert first["cached"] is False
    assert first["recommended_action"] in ("monitor", "coach_agent", "proactive_escalate",
                                           "reassign", "offer_resolution")
    cached = client.get(url(cid, "/prediction")).json()["data"]
    assert cached["cached"] is True
    assert cached["computed_at"] == first["computed_at"]
    client.post(url(cid, "/close"))
    fresh = client.get(url(cid, "/prediction"), {"refresh": "1"}).json()["data"]
    assert fresh["cached"] is False
    assert fresh["recommended_action"] == "monitor"
    assert client.get(url(cid, "/prediction"), {"refresh": "x"}).status_code == 400


def test_unknown_id_and_scopes(tenant):
    client = tenant.client()
    for method, suffix in (("get", ""), ("get", "/messages"), ("post", "/close"),
                           ("get", "/sentiment"), ("post", "/handoff")):
        response = getattr(client, method)(url("cnv_nope", suffix), {}, format="json")
        assert response.status_code == 404, (suffix, response.content)
    key = client.post("/api/v1/api-keys", {"name": "ro", "type": "secret",
                                           "scopes": ["conversations:read"]}, format="json")
    assert key.status_code == 201, key.content
    reader = tenant.client(key.json()["data"]["key"])
    assert reader.get(CONVERSATIONS).status_code == 200
    denied = reader.post(CONVERSATIONS + "/bulk", {"action": "close",
                                                   "conversation_ids": ["x"]}, format="json")
    assert denied.status_code == 403


def test_record_payload_is_the_event_data(tenant, inbound):
    cid = inbound("hello")["conversation_id"]
    event = Event.objects.for_organization(tenant.org).get(type="conversation.created")
    assert event.data["id"] == cid
    assert event.data["status"] == "open"
    assert Conversation.objects.for_organization(tenant.org).get(pk=cid).unread_count == 1
