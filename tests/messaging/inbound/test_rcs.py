"""RCS Business Messaging webhook (Google's scheme): the set-up check, X-Goog-Signature =
base64 HMAC-SHA512 of the decoded message.data keyed with the client token, sendTime
freshness, inbound user messages and DELIVERED / READ events."""

from __future__ import annotations

import json

import pytest

from .conftest import (
    RBM_CLIENT_TOKEN,
    USER_NUMBER,
    events,
    inbound_messages,
    outbound,
    post_rcs,
    rcs_path,
    reload,
    rfc3339_now,
)

pytestmark = pytest.mark.django_db

AGENT = "acme-agent@rbm.goog"


def user_text(text: str, *, message_id: str = "msg-in-1", send_time: str | None = None) -> dict:
    event = {"senderPhoneNumber": USER_NUMBER, "messageId": message_id, "agentId": AGENT,
             "text": text}
    if send_time is not False:
        event["sendTime"] = send_time or rfc3339_now()
    return event


def error_code(response) -> str:
    return response.json()["error"]["code"]


def test_webhook_setup_check(tenant, rcs_account, anon):
    body = json.dumps({"clientToken": RBM_CLIENT_TOKEN, "secret": "1234567890"})
    ok = anon.post(rcs_path(tenant), data=body, content_type="application/json")
    assert ok.status_code == 200
    assert ok.content == b"1234567890"
    wrong = anon.post(rcs_path(tenant), data=json.dumps({"clientToken": "x", "secret": "1"}),
                      content_type="application/json")
    assert (wrong.status_code, error_code(wrong)) == (401, "INVALID_SIGNATURE")


def test_inbound_user_message(tenant, rcs_account, anon, receiver, subscribe, on_commit):
    subscribe(receiver.url)
    with on_commit():
        response = post_rcs(anon, tenant, user_text("Track my parcel"))
    assert response.status_code == 200, response.content
    [message] = inbound_messages(tenant)
    assert (message.channel, message.from_address, message.to, message.body) == (
        "rcs", USER_NUMBER, AGENT, "Track my parcel")
    with on_commit():
        post_rcs(anon, tenant, user_text("Thanks", message_id="msg-in-2"))
    first, second = inbound_messages(tenant)
    assert first.conversation_id == second.conversation_id
    received = [r.json["data"]["normalized"] for r in receiver.requests
                if r.json["type"] == "message.received"]
    assert [n["text"] for n in received] == ["Track my parcel", "Thanks"]
    assert received[0]["channel"] == "rcs"


def test_bad_signature_stale_and_missing_send_time(tenant, rcs_account, anon):
    bad = post_rcs(anon, tenant, user_text("hi"), signature="AAAA")
    assert (bad.status_code, error_code(bad)) == (401, "INVALID_SIGNATURE")
    missing_header = post_rcs(anon, tenant, user_text("hi"), signature="")
    assert (missing_header.status_code, error_code(missing_header)) == (401, "INVALID_SIGNATURE")
    stale = post_rcs(anon, tenant, user_text("hi", send_time=rfc3339_now(-900)))
    assert (stale.status_code, error_code(stale)) == (401, "STALE_WEBHOOK")
    missing = post_rcs(anon, tenant, user_text("hi", send_time=False))
    assert (missing.status_code, error_code(missing)) == (401, "STALE_WEBHOOK")
    assert inbound_messages(tenant) == []


def test_body_without_data(tenant, rcs_account, anon):
    empty = anon.post(rcs_path(tenant), data=b"", content_type="application/json")
    assert (empty.status_code, error_code(empty)) == (400, "WEBHOOK_BODY_MISSING")
    no_data = anon.post(rcs_path(tenant), data=json.dumps({"message": {}}),
                        content_type="application/json", HTTP_X_GOOG_SIGNATURE="x")
    assert (no_data.status_code, error_code(no_data)) == (400, "WEBHOOK_BODY_MISSING")


def test_delivered_and_read_events(tenant, rcs_account, anon):
    message = outbound(tenant, provider="rcs_business", provider_message_id="rbm-out-1",
                       channel="rcs", status="sent")
    event = {"senderPhoneNumber": USER_NUMBER, "eventType": "READ", "eventId": "ev-1",
             "messageId": "rbm-out-1", "sendTime": rfc3339_now(), "agentId": AGENT}
    assert post_rcs(anon, tenant, event).status_code == 200
    assert reload(message).status == "delivered"
    typing = {**event, "eventType": "IS_TYPING", "eventId": "ev-2"}
    assert post_rcs(anon, tenant, typing).status_code == 200
    assert [e.type for e in events(tenant) if e.type.startswith("message.")] == [
        "message.delivered"]
