"""A verification's message never shows its code to a reader: `body` holds the text with
the code masked (read by the messages API, events, webhooks), the real text is encrypted
at rest in `secret_body`, handed to the provider only, and dropped once sent.
Test mode here (the sandbox double is the provider); live mode in test_live.py."""

from __future__ import annotations

import logging

import pytest
from django.db import connection

from messaging.dispatcher import dispatch_accepted
from messaging.models import Message
from messaging.verify.texts import MASK
from platform_core.events.models import Event
from platform_core.tenancy.context import tenant_context

from .conftest import USER

pytestmark = pytest.mark.django_db


def _stored_secret(message_id: str) -> str | None:
    """The column as the database holds it (what a dump or a replica would show)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT secret_body FROM messaging_message WHERE id = %s", [message_id])
        return cursor.fetchone()[0]


def _messages_api(client, message_id: str) -> str:
    listed = client.get("/api/v1/messages")
    detail = client.get(f"/api/v1/messages/{message_id}")
    assert listed.status_code == detail.status_code == 200
    assert message_id in listed.content.decode()
    return listed.content.decode() + detail.content.decode()


def test_the_code_reaches_the_provider_and_no_reader(tenant, send, sandbox_sent, receiver,
                                                     make_endpoint, caplog):
    caplog.set_level(logging.DEBUG)
    make_endpoint(receiver.url, events=["*"])
    data = send({"to": USER}).json()["data"]
    code, message_id = data["test_code"], data["message_id"]  # test mode answers the code

    assert code in sandbox_sent[message_id]
    read = _messages_api(tenant.client(), message_id)
    assert code not in read
    detail = tenant.client().get(f"/api/v1/messages/{message_id}").json()["data"]
    assert detail["body"] == sandbox_sent[message_id].replace(code, MASK)
    assert detail["status"] == "delivered"
    with tenant_context(tenant.org):
        events = list(Event.objects.all())
    assert {"message.queued", "message.sent", "message.delivered",
            "verification.sent"} <= {e.type for e in events}
    assert all(code not in str(e.data) for e in events)
    assert {r.json["type"] for r in receiver.requests} >= {"message.delivered",
                                                           "verification.sent"}
    assert all(code not in r.body.decode() for r in receiver.requests)
    logged = [r.getMessage() + str(r.args) for r in caplog.records]
    assert logged
    assert not [line for line in logged if code in line]
    # Sent: the secret copy is gone from the row.
    assert _stored_secret(message_id) is None


def test_the_waiting_secret_is_encrypted_and_dropped_by_the_send(tenant, sandbox_sent):
    # No after-commit work: the message waits, accepted and unsent.
    response = tenant.client().post("/api/v1/verify/send", {"to": USER, "channel": "sms"},
                                    format="json")
    assert response.status_code == 201, response.content
    code, message_id = response.json()["data"]["test_code"], response.json()["data"][
        "message_id"]
    with tenant_context(tenant.org):
        waiting = Message.objects.get(pk=message_id)
    assert waiting.status == "queued"
    assert code in waiting.secret_body
    stored = _stored_secret(message_id)
    assert stored  # ciphertext at rest
    assert code not in stored
    assert code not in _messages_api(tenant.client(), message_id)

    assert dispatch_accepted() >= 1
    assert code in sandbox_sent[message_id]
    assert _stored_secret(message_id) is None
    with tenant_context(tenant.org):
        assert Message.objects.get(pk=message_id).status == "delivered"


def test_a_failed_send_drops_the_secret(tenant, send, sandbox_sent):
    # +15005550009 is the sandbox's unreachable handset: the message fails.
    data = send({"to": "+15005550009"}).json()["data"]
    message_id = data["message_id"]
    assert data["test_code"] in sandbox_sent[message_id]
    with tenant_context(tenant.org):
        assert Message.objects.get(pk=message_id).status == "failed"
    assert _stored_secret(message_id) is None


def test_an_ordinary_message_has_no_secret_copy(tenant, commit, sandbox_sent):
    with commit():
        response = tenant.client().post("/api/v1/messages", {
            "channel": "sms", "to": USER, "body": "Your order 123456 shipped"}, format="json")
    message_id = response.json()["data"]["id"]
    assert sandbox_sent[message_id] == "Your order 123456 shipped"
    assert response.json()["data"]["body"] == "Your order 123456 shipped"
    assert _stored_secret(message_id) is None
