"""POST /api/v1/sandbox/inbound (0-conventions.md 6): test keys only, the same pipeline as a
provider webhook (conversation created then continued, message.received observed by a real
receiver), and STOP / START end to end against POST /api/v1/messages."""

from __future__ import annotations

import pytest

from conversations.models import Conversation
from tests.conftest import make_tenant

from .conftest import BUSINESS_NUMBER, USER_NUMBER, events, inbound_messages

pytestmark = pytest.mark.django_db

INBOUND = "/api/v1/sandbox/inbound"


def inject(client, body: str, *, channel: str = "sms", sender: str = USER_NUMBER,
           to: str = BUSINESS_NUMBER):
    return client.post(INBOUND, {"channel": channel, "from": sender, "to": to, "body": body},
                       format="json")


def send(client, to: str = USER_NUMBER, sender: str = BUSINESS_NUMBER):
    return client.post("/api/v1/messages", {"channel": "sms", "to": to, "from": sender,
                                            "body": "Weekly deals inside"}, format="json")


def test_inject_creates_then_continues_the_conversation(tenant, receiver, subscribe, on_commit):
    subscribe(receiver.url, events=("message.received", "conversation.created"))
    client = tenant.client()
    with on_commit():
        first = inject(client, "Hello from the sandbox")
    assert first.status_code == 201, first.content
    data = first.json()["data"]
    assert data["id"].startswith("msg_")
    assert (data["direction"], data["status"], data["channel"]) == ("inbound", "received", "sms")
    assert (data["from"], data["to"]) == (USER_NUMBER, BUSINESS_NUMBER)
    assert data["conversation_id"].startswith("cnv_")
    assert data["contact_id"].startswith("cnt_")
    with on_commit():
        second = inject(client, "Still there?")
    assert second.json()["data"]["conversation_id"] == data["conversation_id"]
    assert Conversation.objects.for_organization(tenant.org).count() == 1

    types = [r.json["type"] for r in receiver.requests]
    assert types.count("message.received") == 2
    assert types.count("conversation.created") == 1
    received = [r.json for r in receiver.requests if r.json["type"] == "message.received"]
    normalized = received[0]["data"]["normalized"]
    assert normalized == {
        "channel": "sms", "from": USER_NUMBER, "to": BUSINESS_NUMBER,
        "text": "Hello from the sandbox", "media": [], "contact_id": data["contact_id"],
        "conversation_id": data["conversation_id"],
        "received_at": normalized["received_at"],
    }
    # The message is readable through the messages API like any other.
    detail = client.get(f"/api/v1/messages/{data['id']}")
    assert detail.status_code == 200
    assert detail.json()["data"]["direction"] == "inbound"


def test_national_numbers_and_channels(tenant):
    client = tenant.client()
    response = inject(client, "hi", sender="(415) 555-0199", to="415 555 0100")
    assert response.status_code == 201, response.content
    assert response.json()["data"]["from"] == "+14155550199"
    email = inject(client, "Question about billing", channel="email",
                   sender="Ann@Example.com", to="support@acme.test")
    assert email.status_code == 201, email.content
    assert email.json()["data"]["from"] == "ann@example.com"
    rcs = inject(client, "hey", channel="rcs", to="acme-agent@rbm.goog")
    assert rcs.status_code == 201, rcs.content
    assert rcs.json()["data"]["to"] == "acme-agent@rbm.goog"
    threads = Conversation.objects.for_organization(tenant.org)
    assert sorted(threads.values_list("channel", flat=True)) == ["email", "rcs", "sms"]


def test_validation(tenant):
    client = tenant.client()
    bad = inject(client, "hi", sender="12")
    assert bad.status_code == 422
    assert bad.json()["error"]["code"] == "INVALID_PHONE_NUMBER"
    assert bad.json()["error"]["details"]["field"] == "from"
    missing = client.post(INBOUND, {"channel": "sms", "to": BUSINESS_NUMBER, "body": "x"},
                          format="json")
    assert missing.status_code == 422
    assert [i["field"] for i in missing.json()["error"]["details"]["issues"]] == ["from"]
    wrong_channel = inject(client, "hi", channel="fax")
    assert wrong_channel.status_code == 422
    assert inbound_messages(tenant) == []


def test_live_key_gets_403(db):
    live = make_tenant(sandbox=False)
    response = inject(live.client(), "hi")
    assert response.status_code == 403
    assert response.json()["error"]["code"] == "TEST_MODE_ONLY"
    assert inbound_messages(live) == []


def test_needs_credentials(anon):
    assert inject(anon, "hi").status_code == 401


def test_stop_opts_out_and_start_opts_back_in(tenant, on_commit):
    client = tenant.client()
    assert send(client).status_code == 202

    with on_commit():
        stop = inject(client, "STOP")
    assert stop.status_code == 201, stop.content
    blocked = send(client)
    assert blocked.status_code == 422, blocked.content
    assert blocked.json()["error"]["code"] == "RECIPIENT_OPTED_OUT"
    assert [e.data["from"] for e in events(tenant, "message.opt_out")] == [USER_NUMBER]
    # Another recipient is not affected.
    assert send(client, to="+14155550124").status_code == 202

    with on_commit():
        assert inject(client, "Start").status_code == 201
    again = send(client)
    assert again.status_code == 202, again.content
    assert len(events(tenant, "message.opt_in")) == 1


def test_localized_stop(tenant):
    client = tenant.client()
    assert inject(client, "Arrêt").status_code == 201
    assert send(client).json()["error"]["code"] == "RECIPIENT_OPTED_OUT"
