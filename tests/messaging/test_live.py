"""Live mode through the registered providers: the send task picks the organization's
provider account (registry.provider_for) and applies the adapter's result. The providers'
APIs are the providers family's loopback stand-ins."""

from __future__ import annotations

from datetime import timedelta

import pytest
import time_machine

from messaging.tasks import dispatch_due
from platform_core.net import http
from tests.conftest import make_tenant
from tests.messaging.providers import fakes

from .conftest import USER, load, message_events

pytestmark = pytest.mark.django_db


@pytest.fixture
def fake(settings):
    settings.ALLOW_PRIVATE_WEBHOOK_TARGETS = True
    settings.PROVIDER_HTTP_BACKOFF_BASE = 0.01
    settings.PROVIDER_HTTP_BACKOFF_MAX = 0.02
    settings.PROVIDER_HTTP_MAX_ATTEMPTS = 2
    settings.PROVIDER_HTTP_TIMEOUT = 5
    settings.PROVIDER_BREAKER_THRESHOLD = 1000
    server = fakes.start_fake()
    yield server
    server.close()
    http.close_connections()


@pytest.fixture
def live(db, fake):
    tenant = make_tenant(sandbox=False)
    response = tenant.client().put("/api/v1/providers/sms", {
        "provider": "twilio", "base_url": fake.url,
        "credentials": {"auth_token": fakes.TWILIO_TOKEN},
        "config": {"account_sid": fakes.TWILIO_SID, "from": "+14155550100"}}, format="json")
    assert response.status_code in (200, 201), response.content
    return tenant


def test_live_sms_goes_through_twilio(live, fake, send):
    response = send({"channel": "sms", "to": USER, "body": "Hello"}, client=live.client())
    assert response.status_code == 202, response.content
    data = response.json()["data"]
    assert data["provider"] == "twilio"
    assert data["from"] == "+14155550100"  # the account's default sender
    message = load(live, data["id"])
    # Twilio accepted it (`queued`); its status webhooks move it on from here.
    assert message.status == "queued"
    assert message.provider_message_id.startswith("SM")
    assert message.dispatched_at is not None
    (seen,) = fake.hits("Messages.json")
    form = dict(seen.form)
    assert (form["To"], form["From"], form["Body"]) == (USER, "+14155550100", "Hello")
    assert [e.type for e in message_events(live, data["id"])] == ["message.queued"]


def test_mms_and_voice_use_the_sms_account(live, fake, send):
    mms = send({"channel": "mms", "to": USER, "media_url": "https://cdn.example.com/a.png"},
               client=live.client()).json()["data"]
    voice = send({"channel": "voice", "to": USER, "body": "Your code is 1 2 3 4"},
                 client=live.client()).json()["data"]
    assert mms["provider"] == voice["provider"] == "twilio"
    assert len(fake.hits("Messages.json")) == 1
    assert len(fake.hits("Calls.json")) == 1
    assert load(live, voice["id"]).provider_message_id.startswith("CA")


def test_provider_refusal_fails_the_message_with_its_code(live, send):
    data = send({"channel": "sms", "to": fakes.INVALID_TO, "body": "x"},
                client=live.client()).json()["data"]
    message = load(live, data["id"])
    assert (message.status, message.error_code) == ("failed", "21211")
    failed = message_events(live, data["id"])[-1]
    assert failed.type == "message.failed"
    assert failed.data["error_code"] == "21211"
    assert "not a valid phone number" in failed.data["error_message"]


def test_provider_outage_is_retried_then_fails(live, fake, send, commit, settings):
    """A transient provider error leaves the message queued with its next attempt due at
    `retry_at` (timed work, no countdown task); the timed drain sends it again when due
    and, after the last of the retry delays, the message fails."""
    settings.MESSAGING_SEND_RETRY_DELAYS = (5, 30)
    fake.faults.extend(["503:0"] * 50)
    data = send({"channel": "sms", "to": USER, "body": "x"}, client=live.client()).json()["data"]
    message = load(live, data["id"])
    assert (message.status, message.send_attempts, message.dispatched_at) == ("queued", 1, None)
    first_hits = len(fake.hits("Messages.json"))
    assert first_hits == 2  # the client's own two attempts
    with time_machine.travel(message.retry_at - timedelta(seconds=1), tick=False), commit():
        dispatch_due()
    assert len(fake.hits("Messages.json")) == first_hits  # not due yet
    with time_machine.travel(message.retry_at, tick=False), commit():
        dispatch_due()
    message = load(live, data["id"])
    assert (message.status, message.send_attempts) == ("queued", 2)
    with time_machine.travel(message.retry_at, tick=False), commit():
        dispatch_due()
    message = load(live, data["id"])
    assert message.status == "failed"
    assert message.error_code
    assert len(fake.hits("Messages.json")) == 3 * first_hits


def test_channel_without_account_is_503(live, send):
    response = send({"channel": "whatsapp", "to": USER, "body": "x"}, client=live.client())
    assert response.status_code == 503
    assert response.json()["error"]["code"] == "PROVIDER_NOT_WIRED"
