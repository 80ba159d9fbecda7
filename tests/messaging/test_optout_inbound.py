"""STOP / START / HELP keywords and the opt-out list blocking sends (0-conventions.md 6),
and the inbound message service the provider webhooks call (messaging contract)."""

from __future__ import annotations

from datetime import timedelta

import pytest
import time_machine
from django.utils import timezone
from standardwebhooks import Webhook

from messaging import keywords, services
from messaging.models import OptOut
from messaging.tasks import dispatch_due
from platform_core.tenancy.context import tenant_context

from .conftest import BUSINESS, BUSINESS_2, USER, USER_2, events, load, messages

pytestmark = pytest.mark.django_db


@pytest.fixture
def inbound(tenant, commit):
    def receive(body: str, *, sender: str = USER, to: str = BUSINESS, channel: str = "sms",
                provider_message_id: str | None = None, org=None):
        with commit(), tenant_context(org or tenant.org):
            return services.inbound_message_create(
                organization=org or tenant.org, channel=channel, from_=sender, to=to,
                body=body, provider="sandbox", provider_message_id=provider_message_id)

    return receive


@pytest.fixture
def service(tenant):
    response = tenant.client().post("/api/v1/messaging-services", {
        "name": "Notifications",
        "senders": [{"channel": "sms", "from": BUSINESS}, {"channel": "sms", "from": BUSINESS_2},
                    {"channel": "whatsapp", "from": BUSINESS}],
    }, format="json")
    assert response.status_code == 201, response.content
    return response.json()["data"]


def opted_out(response) -> dict:
    assert response.status_code == 422, response.content
    error = response.json()["error"]
    assert error["code"] == "RECIPIENT_OPTED_OUT"
    return error


def test_stop_blocks_later_sends_and_start_lifts_it(tenant, send, inbound):
    message = inbound("STOP")
    assert message.metadata["keyword"] == "opt_out"
    assert "unsubscribed" in message.metadata["auto_reply"]
    error = opted_out(send({"channel": "sms", "to": USER, "from": BUSINESS, "body": "Sale!"}))
    assert error["details"]["field"] == "to"
    assert error["details"]["sender"] == BUSINESS
    # The opt-out is per sender: another number may still write.
    assert send({"channel": "sms", "to": USER, "from": BUSINESS_2, "body": "x"}).status_code == 202
    # It covers that number's other channels too.
    opted_out(send({"channel": "whatsapp", "to": USER, "from": BUSINESS, "body": "x"}))
    opt_out_event = events(tenant, "message.opt_out")[0]
    assert opt_out_event.data["from"] == USER
    assert opt_out_event.data["to"] == BUSINESS
    assert opt_out_event.data["keyword"] == "STOP"
    assert opt_out_event.data["normalized"]["from"] == USER

    assert inbound("start").metadata["keyword"] == "opt_in"
    assert send({"channel": "sms", "to": USER, "from": BUSINESS, "body": "x"}).status_code == 202
    assert events(tenant, "message.opt_in")[0].data["from"] == USER


@pytest.mark.parametrize("body", ["STOP", "stop", " Stop. ", "UNSUBSCRIBE", "end", "Quit",
                                  "CANCEL", "STOPALL", "arrêt", "ARRET", "Baja", "parar",
                                  "ALTO", "Stopp", "fermata"])
def test_opt_out_keywords(tenant, inbound, body):
    assert inbound(body).metadata["keyword"] == "opt_out"
    with tenant_context(tenant.org):
        assert OptOut.objects.filter(recipient=USER).count() == 1


@pytest.mark.parametrize("body", ["please stop texting me", "STOP IT NOW PLEASE", "stopping",
                                  "", "hello"])
def test_not_keywords(tenant, inbound, body):
    assert "keyword" not in inbound(body).metadata
    with tenant_context(tenant.org):
        assert not OptOut.objects.exists()


@pytest.mark.parametrize("body", ["HELP", "info", "Ayuda", "AIDE"])
def test_help_keywords(tenant, inbound, send, body):
    message = inbound(body)
    assert message.metadata["keyword"] == "help"
    assert "Reply STOP" in message.metadata["auto_reply"]
    assert send({"channel": "sms", "to": USER, "from": BUSINESS, "body": "x"}).status_code == 202


def test_repeated_stop_keeps_one_row(tenant, inbound):
    inbound("STOP")
    inbound("STOP")
    with tenant_context(tenant.org):
        assert OptOut.objects.count() == 1


def test_stop_to_a_service_number_stops_the_service(tenant, send, inbound, service):
    inbound("STOP", to=BUSINESS_2)
    with tenant_context(tenant.org):
        row = OptOut.objects.get()
    assert row.messaging_service_id == service["id"]
    # Any send through the service is blocked, whichever pool sender it would use...
    opted_out(send({"channel": "sms", "to": USER, "body": "x",
                    "messaging_service_id": service["id"]}))
    # ...and the number itself, outside the service.
    opted_out(send({"channel": "sms", "to": USER, "from": BUSINESS_2, "body": "x"}))
    # Other recipients are unaffected.
    assert send({"channel": "sms", "to": USER_2, "body": "x",
                 "messaging_service_id": service["id"]}).status_code == 202
    inbound("UNSTOP", to=BUSINESS)  # START to any number of the service lifts it
    assert send({"channel": "sms", "to": USER, "body": "x",
                 "messaging_service_id": service["id"]}).status_code == 202


def test_stopall_blocks_every_sender(tenant, send, inbound):
    inbound("STOPALL")
    for sender in (BUSINESS, BUSINESS_2, "ACME"):
        opted_out(send({"channel": "sms", "to": USER, "from": sender, "body": "x"}))
    inbound("START")
    assert send({"channel": "sms", "to": USER, "from": BUSINESS_2, "body": "x"}).status_code == 202


def test_service_without_opt_out_handling_ignores_keywords(tenant, send, inbound, service):
    tenant.client().patch(f"/api/v1/messaging-services/{service['id']}",
                          {"opt_out_handling": False}, format="json")
    message = inbound("STOP", to=BUSINESS)
    assert "keyword" not in message.metadata
    assert send({"channel": "sms", "to": USER, "from": BUSINESS, "body": "x"}).status_code == 202


def test_stop_after_scheduling_fails_the_send(tenant, send, inbound, commit):
    send_at = timezone.now() + timedelta(minutes=5)
    message_id = send({"channel": "sms", "to": USER, "from": BUSINESS, "body": "x",
                       "send_at": send_at.isoformat()}).json()["data"]["id"]
    inbound("STOP")
    with time_machine.travel(send_at + timedelta(seconds=1), tick=True), commit():
        dispatch_due()
    message = load(tenant, message_id)
    assert (message.status, message.error_code) == ("failed", "RECIPIENT_OPTED_OUT")


def test_keyword_service_contract(tenant):
    """handle_keywords as the inbound pipeline calls it: returns the keyword kind."""
    with tenant_context(tenant.org):
        assert keywords.handle_keywords(organization=tenant.org, channel="whatsapp",
                                        sender=USER, recipient=BUSINESS, body="BAJA") == "opt_out"
        assert keywords.handle_keywords(organization=tenant.org, channel="whatsapp",
                                        sender=USER, recipient=BUSINESS, body="hola") is None
        assert keywords.handle_keywords(organization=tenant.org, channel="whatsapp",
                                        sender=USER, recipient=BUSINESS, body="ALTA") == "opt_in"
        assert not OptOut.objects.exists()


# --- Inbound messages ----------------------------------------------------------------------


def test_inbound_message_creates_contact_conversation_and_event(tenant, inbound):
    message = inbound("Hi, where is my order?", sender="(415) 555-0123",
                      provider_message_id="SM1")
    assert message.direction == "inbound"
    assert message.status == "received"
    assert message.from_ == USER
    assert message.contact_id.startswith("cnt_")
    assert message.conversation_id.startswith("cnv_")
    received = events(tenant, "message.received")
    assert len(received) == 1
    data = received[0].data
    assert data["message_id"] == message.pk
    assert data["status"] == "received"
    normalized = data["normalized"]
    assert normalized["channel"] == "sms"
    assert normalized["from"] == USER
    assert normalized["to"] == BUSINESS
    assert normalized["text"] == "Hi, where is my order?"
    assert normalized["contact_id"] == message.contact_id
    assert normalized["conversation_id"] == message.conversation_id
    assert normalized["received_at"].endswith("Z")
    share = events(tenant, "normalized.inbound")
    assert share[0].data["message_id"] == message.pk
    # The next message continues the thread; a retried webhook makes no second message.
    again = inbound("hello?", provider_message_id="SM2")
    assert again.conversation_id == message.conversation_id
    assert again.contact_id == message.contact_id
    assert inbound("Hi, where is my order?", provider_message_id="SM1").pk == message.pk
    assert len(messages(tenant, direction="inbound")) == 2
    listed = tenant.client().get("/api/v1/messages?direction=inbound").json()["data"]
    assert {m["id"] for m in listed} == {message.pk, again.pk}


def test_inbound_webhook_of_the_messaging_service(tenant, inbound, receiver):
    service = tenant.client().post("/api/v1/messaging-services", {
        "name": "Support", "senders": [{"channel": "sms", "from": BUSINESS}],
        "inbound_webhook_url": receiver.url + "?inbound=1"}, format="json").json()["data"]
    message = inbound("Hello", to=BUSINESS)
    assert message.messaging_service_id == service["id"]
    got = [r for r in receiver.requests if r.path.endswith("?inbound=1")]
    assert [r.json["type"] for r in got] == ["message.received"]
    secret = tenant.client().get("/api/v1/messaging/callback-secret").json()["data"]["secret"]
    assert Webhook(secret).verify(got[0].body, got[0].headers)["data"]["message_id"] == message.pk
