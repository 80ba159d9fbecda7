"""Replies (202 through messaging), the chat-app window, reply-sender, resume-channel,
side conversations, merge (weak identity) and bulk actions."""

from __future__ import annotations

from datetime import timedelta

import pytest
import time_machine
from django.utils import timezone

from messaging.models import Message

from .conftest import BUSINESS, CONVERSATIONS, contact, url

pytestmark = pytest.mark.django_db


def outbound(tenant, cid: str) -> list[Message]:
    return list(Message.objects.for_organization(tenant.org)
                .filter(conversation_id=cid, direction="outbound").order_by("id"))


def test_reply_goes_out_on_the_inbound_channel(tenant, inbound, commit):
    client = tenant.client()
    cid = inbound("hello")["conversation_id"]
    sender = client.get(url(cid, "/reply-sender")).json()["data"]
    assert sender == {"channel": "sms", "from": BUSINESS, "source": "last_inbound"}
    with commit():
        response = client.post(url(cid, "/messages"), {"body": "Hi, how can we help?"},
                               format="json")
    assert response.status_code == 202, response.content
    data = response.json()["data"]
    assert (data["channel"], data["to"], data["from"]) == ("sms", "+14155550123", BUSINESS)
    assert data["conversation_id"] == cid
    assert data["direction"] == "outbound"
    [message] = outbound(tenant, cid)
    assert message.contact_id == client.get(url(cid)).json()["data"]["contact_id"]
    record = client.get(url(cid)).json()["data"]
    assert record["unread"] is False
    assert record["last_message"]["direction"] == "outbound"
    assert client.post(url(cid, "/messages"), {}, format="json").status_code == 422


def test_reply_refused_until_reopened(tenant, inbound):
    client = tenant.client()
    cid = inbound("hello")["conversation_id"]
    client.post(url(cid, "/snooze"), {"until": (timezone.now() + timedelta(hours=1))
                                      .isoformat()}, format="json")
    refused = client.post(url(cid, "/messages"), {"body": "x"}, format="json")
    assert refused.status_code == 409
    assert refused.json()["error"]["code"] == "CONVERSATION_NOT_OPEN"
    client.post(url(cid, "/close"))
    assert client.post(url(cid, "/messages"), {"body": "x"}, format="json").status_code == 409
    client.post(url(cid, "/reopen"))
    assert client.post(url(cid, "/messages"), {"body": "x"}, format="json").status_code == 202
    assert len(outbound(tenant, cid)) == 1


def test_chat_app_reply_outside_the_24_hour_window(tenant, inbound):
    client = tenant.client()
    cid = inbound("hi on whatsapp", channel="whatsapp")["conversation_id"]
    inside = client.post(url(cid, "/messages"), {"body": "inside"}, format="json")
    assert inside.status_code == 202, inside.content
    with time_machine.travel(timezone.now() + timedelta(hours=25)):
        outside = client.post(url(cid, "/messages"), {"body": "late"}, format="json")
        assert outside.status_code == 422
        assert outside.json()["error"]["code"] == "OUTSIDE_CUSTOMER_SERVICE_WINDOW"
        # The same thread on SMS has no window.
        sms = client.post(url(cid, "/messages"), {"body": "late", "channel": "sms"},
                          format="json")
        assert sms.status_code == 202, sms.content
        assert sms.json()["data"]["channel"] == "sms"


def test_resume_channel_moves_replies(tenant, inbound):
    client = tenant.client()
    contact(tenant, email="ada@example.com")
    cid = inbound("hello")["conversation_id"]
    no_address = client.post(url(cid, "/resume-channel"), {"channel": "voice"}, format="json")
    assert no_address.status_code == 200  # the phone reaches voice
    moved = client.post(url(cid, "/resume-channel"), {"channel": "email"}, format="json")
    assert moved.status_code == 200
    assert moved.json()["data"]["reply_channel"] == "email"
    sender = client.get(url(cid, "/reply-sender")).json()["data"]
    assert sender == {"channel": "email", "from": None, "source": "channel_default"}
    reply = client.post(url(cid, "/messages"), {"body": "by mail", "subject": "Your question"},
                        format="json")
    assert reply.status_code == 202, reply.content
    assert (reply.json()["data"]["channel"], reply.json()["data"]["to"]) == (
        "email", "ada@example.com")
    bad = client.post(url(cid, "/resume-channel"), {"channel": "fax"}, format="json")
    assert bad.status_code in (400, 422)


def test_side_conversations(tenant, inbound):
    client = tenant.client()
    cid = inbound("my order is late")["conversation_id"]
    side_url = url(cid, "/side-conversations")
    invalid = client.post(side_url, {"external_participants": [
        {"label": "Warehouse", "phone": "0123"}]}, format="json")
    assert invalid.status_code in (400, 422)
    assert client.post(side_url, {"external_participants": []},
                       format="json").status_code in (400, 422)
    created = client.post(side_url, {
        "subject": "Order 42",
        "external_participants": [
            {"label": "Warehouse", "email": "ops@warehouse.example", "role": "supplier"},
            {"label": "Courier", "phone": "+14155550777"},
        ],
        "body": "Where is order 42?",
    }, format="json")
    assert created.status_code == 201, created.content
    side = created.json()["data"]
    assert side["id"].startswith("scv_")
    assert side["status"] == "open"
    assert side["external_participants"][0]["label"] == "Warehouse"
    assert len(side["first_message"]["message_ids"]) == 2
    sent = Message.objects.for_organization(tenant.org).filter(
        pk__in=side["first_message"]["message_ids"])
    assert sorted(m.channel for m in sent) == ["email", "sms"]
    listed = client.get(side_url).json()["data"]
    assert [s["id"] for s in listed] == [side["id"]]
    reply = client.post(f"{side_url}/{side['id']}/reply", {"body": "Any news?"},
                        format="json")
    assert reply.status_code == 202
    assert len(reply.json()["data"]["message_ids"]) == 2
    resolved = client.post(f"{side_url}/{side['id']}/resolve")
    assert resolved.json()["data"]["status"] == "resolved"
    assert resolved.json()["data"]["resolved_at"] is not None
    refused = client.post(f"{side_url}/{side['id']}/reply", {"body": "x"}, format="json")
    assert refused.status_code == 409
    assert client.post(f"{side_url}/{side['id']}/resolve").status_code == 409
    assert client.post(f"{side_url}/{side['id']}/reopen").json()["data"]["status"] == "open"
    assert client.post(f"{side_url}/scv_nope/reopen").status_code == 404
    kinds = [r["kind"] for r in client.get(url(cid, "/activity")).json()["data"]]
    assert "side_conversation_created" in kinds
    assert "side_conversation_resolved" in kinds


def test_merge_same_contact_and_weak_identity(tenant, inbound):
    client = tenant.client()
    sms = inbound("on sms")
    chat = inbound("on whatsapp", channel="whatsapp")
    assert sms["contact_id"] == chat["contact_id"]
    merged = client.post(url(sms["conversation_id"], "/merge"),
                         {"source_conversation_id": chat["conversation_id"]}, format="json")
    assert merged.status_code == 200, merged.content
    assert merged.json()["data"]["unread_count"] == 2
    source = client.get(url(chat["conversation_id"])).json()["data"]
    assert source["status"] == "archived"
    assert source["merged_into_id"] == sms["conversation_id"]
    thread = client.get(url(sms["conversation_id"], "/messages")).json()["data"]
    assert [m["body"] for m in thread] == ["on sms", "on whatsapp"]
    again = client.post(url(sms["conversation_id"], "/merge"),
                        {"source_conversation_id": chat["conversation_id"]}, format="json")
    assert again.status_code == 409
    # Two contacts sharing only a phone: the first one's number changed since it wrote,
    # and the number now belongs to another contact. Confirmation required.
    old = inbound("from the old number", sender="+14155550201")
    changed = client.patch(f"/api/v1/contacts/{old['contact_id']}", {"phone": "+14155550299"},
                           format="json")
    assert changed.status_code == 200, changed.content
    new = inbound("from the same number", sender="+14155550201")
    assert new["contact_id"] != old["contact_id"]
    a_id, b_id = new["conversation_id"], old["conversation_id"]
    weak = client.post(url(a_id, "/merge"), {"source_conversation_id": b_id}, format="json")
    assert weak.status_code == 422
    error = weak.json()["error"]
    assert error["code"] == "WEAK_IDENTITY_MATCH_REQUIRES_CONFIRMATION"
    assert error["details"]["shared"] == ["phone"]
    confirmed = client.post(url(a_id, "/merge"), {"source_conversation_id": b_id,
                                                  "confirm_weak_identity": True},
                            format="json")
    assert confirmed.status_code == 200
    # Unrelated contacts are never merged.
    third = contact(tenant, phone="+14155550203")
    c = client.post(CONVERSATIONS, {"contact_id": third, "channel": "sms"}, format="json")
    unrelated = client.post(url(a_id, "/merge"), {"source_conversation_id": c.json()[
        "data"]["id"], "confirm_weak_identity": True}, format="json")
    assert unrelated.status_code == 422
    assert unrelated.json()["error"]["code"] == "VALIDATION_ERROR"
    assert client.post(url(a_id, "/merge"), {"source_conversation_id": a_id},
                       format="json").status_code == 422


def test_bulk_actions_with_per_id_results(tenant, inbound):
    client = tenant.client()
    cids = [inbound("hi", sender=f"+1415555040{i}")["conversation_id"] for i in range(3)]
    bulk = CONVERSATIONS + "/bulk"
    tagged = client.post(bulk, {"action": "add_tags", "conversation_ids": cids,
                                "tags": ["promo", "q3"]}, format="json")
    assert tagged.status_code == 200, tagged.content
    assert tagged.json()["data"]["succeeded"] == 3
    client.post(url(cids[0], "/close"))
    closed = client.post(bulk, {"action": "close",
                                "conversation_ids": [*cids, "cnv_unknown"]}, format="json")
    data = closed.json()["data"]
    assert (data["total"], data["succeeded"], data["failed"]) == (4, 2, 2)
    by_id = {r["id"]: r for r in data["results"]}
    assert by_id[cids[0]]["ok"] is False
    assert by_id[cids[0]]["error"]["code"] == "CONFLICT"
    assert by_id["cnv_unknown"]["error"]["code"] == "NOT_FOUND"
    assert by_id[cids[1]] == {"id": cids[1], "ok": True, "status": "closed"}
    reopened = client.post(bulk, {"action": "reopen", "conversation_ids": cids}, format="json")
    assert reopened.json()["data"]["succeeded"] == 3
    removed = client.post(bulk, {"action": "remove_tags", "conversation_ids": cids,
                                 "tags": ["promo"]}, format="json")
    assert removed.json()["data"]["succeeded"] == 3
    assert client.get(url(cids[2])).json()["data"]["tags"] == ["q3"]
    assigned = client.post(bulk, {"action": "assign", "conversation_ids": cids,
                                  "agent_id": tenant.owner.pk}, format="json")
    assert assigned.json()["data"]["succeeded"] == 3
    for body in ({"action": "assign", "conversation_ids": cids},
                 {"action": "add_tags", "conversation_ids": cids},
                 {"action": "close", "conversation_ids": []},
                 {"action": "close", "conversation_ids": [f"cnv_{i}" for i in range(201)]},
                 {"action": "archive", "conversation_ids": cids}):
        response = client.post(bulk, body, format="json")
        assert response.status_code in (400, 422), body
        assert response.json()["error"]["code"] == "VALIDATION_ERROR"
