"""Block / unblock: list, a blocked user's inbound is dropped, sends to it refused."""

from __future__ import annotations

import pytest

from .conftest import (
    USER,
    USER_2,
    code,
    data,
    inbound,
    messages,
    post_webhook,
    wa_message,
    with_app_secret,
)

pytestmark = pytest.mark.django_db


def test_block_list_unblock(wa):
    client = wa.client()
    contact = client.post("/api/v1/contacts", {"phone": USER_2, "first_name": "Ann"},
                          format="json")
    contact_id = data(contact)["id"]
    response = client.post("/api/v1/whatsapp/block-users",
                           {"block_users": [{"user": USER}, {"user": contact_id}]},
                           format="json")
    assert response.status_code == 200, response.content
    added = data(response)["added_users"]
    assert {a["user"] for a in added} == {USER, USER_2}
    assert next(a for a in added if a["user"] == USER_2)["contact_id"] == contact_id
    again = data(client.post("/api/v1/whatsapp/block-users",
                             {"block_users": [{"user": USER}]}, format="json"))
    assert again == {"added_users": [], "already_blocked": [USER]}
    listed = data(client.get("/api/v1/whatsapp/block-users"))
    assert {r["user"] for r in listed} == {USER, USER_2}
    removed = client.post("/api/v1/whatsapp/unblock-users",
                          {"block_users": [{"user": USER}, {"user": "+14155550999"}]},
                          format="json")
    assert removed.status_code == 200
    assert data(removed) == {"removed_users": [{"user": USER}],
                             "not_blocked": ["+14155550999"]}
    assert {r["user"] for r in data(client.get("/api/v1/whatsapp/block-users"))} == {USER_2}


def test_block_validation(wa):
    client = wa.client()
    for body, field in (({}, "block_users"), ({"block_users": []}, "block_users"),
                        ({"block_users": [{"user": "nope"}]}, "block_users[0].user"),
                        ({"block_users": [{"user": "cnt_missing"}]}, "block_users[0].user"),
                        ({"block_users": [{"user": f"+1415555{i:04d}"} for i in range(101)]},
                         "block_users")):
        response = client.post("/api/v1/whatsapp/block-users", body, format="json")
        assert response.status_code == 422, (body, response.content)
        assert response.json()["error"]["details"]["issues"][0]["field"] == field


def test_blocked_user_is_dropped_and_refused(wa, anon):
    inbound(wa)
    client = wa.client()
    client.post("/api/v1/whatsapp/block-users", {"block_users": [{"user": USER}]},
                format="json")
    # Test-mode injection answers the drop; nothing is stored.
    dropped = inbound(wa, body="still there?")
    assert dropped.status_code == 422
    assert code(dropped) == "INBOUND_DROPPED"
    # A provider webhook is acknowledged, the message dropped.
    with_app_secret(wa)
    hook = post_webhook(anon, wa, "messages", wa_message(
        {"id": "wamid.B1", "type": "text", "text": {"body": "hello?"}}))
    assert hook.status_code == 200
    assert data(hook)["dropped"] == 1
    assert len(messages(wa, direction="inbound")) == 1
    # Every send API refuses it.
    plain = client.post("/api/v1/messages", {"channel": "whatsapp", "to": USER, "body": "x"},
                        format="json")
    assert plain.status_code == 422
    assert code(plain) == "WHATSAPP_USER_BLOCKED"
    interactive = client.post("/api/v1/whatsapp/messages/send-interactive", {
        "to": USER, "body": "x", "action": {"buttons": [{"id": "a", "title": "A"}]}},
        format="json")
    assert code(interactive) == "WHATSAPP_USER_BLOCKED"
    # SMS to the same number is not WhatsApp's business.
    sms = client.post("/api/v1/messages", {"channel": "sms", "to": USER, "body": "x"},
                      format="json")
    assert sms.status_code == 202
    client.post("/api/v1/whatsapp/unblock-users", {"block_users": [{"user": USER}]},
                format="json")
    assert inbound(wa, body="back").status_code == 201
