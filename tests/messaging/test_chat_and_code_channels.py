"""Viber, Telegram and flash calls as messaging channels (POST /api/v1/messages): the
sandbox double in test mode, their adapters (Vonage Messages, Telegram Gateway, Twilio
Calls) on the providers' loopback stand-ins in live mode, 503 without an account."""

# The live fixtures come from test_live (imported, then taken as arguments).
# ruff: noqa: F811
from __future__ import annotations

import pytest

from tests.messaging.providers import fakes

from .conftest import USER, load
from .test_live import fake, live  # noqa: F401

pytestmark = pytest.mark.django_db


def test_test_mode_walks_the_lifecycle_on_each_channel(send, tenant):
    for channel, body in (("viber", "Hello on Viber"), ("telegram", "123456"),
                          ("flashcall", "4821")):
        response = send({"channel": channel, "to": USER, "body": body})
        assert response.status_code == 202, (channel, response.content)
        message = load(tenant, response.json()["data"]["id"])
        assert (message.channel, message.provider, message.status) == (
            channel, "sandbox", "delivered")


@pytest.mark.parametrize(("body", "field"), [
    ({"channel": "telegram", "body": "Your code is 123456"}, "body"),
    ({"channel": "flashcall", "body": "12"}, "body"),
    ({"channel": "flashcall", "body": "1234", "media_url": "https://example.com/a.png"},
     "media_url"),
    ({"channel": "viber", "body": "x" * 1001}, "body"),
    ({"channel": "flashcall", "body": "1234", "from": "+14155550100123"}, "from"),
    ({"channel": "sms", "body": "hi", "fallback": ["telegram"]}, "fallback"),
])
def test_code_channels_carry_a_code_and_chat_channels_their_limits(send, body, field):
    response = send({"to": USER, **body})
    assert response.status_code in (400, 422), response.content
    details = response.json()["error"]["details"]
    assert details.get("field", details["issues"][0]["field"]) == field, details


def test_live_without_an_account_is_503(live, send):
    # The live tenant has a Twilio account without a flash call range.
    for channel, body in (("viber", "hi"), ("telegram", "1234"), ("flashcall", "1234")):
        response = send({"channel": channel, "to": USER, "body": body}, client=live.client())
        assert (response.status_code, response.json()["error"]["code"]) == (
            503, "PROVIDER_NOT_WIRED"), channel


def _account(tenant, fake, channel: str, body: dict) -> None:
    response = tenant.client().put(f"/api/v1/providers/{channel}",
                                   {"base_url": fake.url, **body}, format="json")
    assert response.status_code in (200, 201), response.content


def test_live_viber_through_vonage(live, fake, send):
    _account(live, fake, "viber", {"provider": "vonage", "config": {"from": "AcmeBank"},
                                   "credentials": {"api_key": fakes.VONAGE_KEY,
                                                   "api_secret": fakes.VONAGE_SECRET}})
    data = send({"channel": "viber", "to": USER, "body": "Hola"},
                client=live.client()).json()["data"]
    message = load(live, data["id"])
    assert (message.provider, message.status) == ("vonage", "sent")
    (seen,) = fake.hits("/v1/messages")
    assert seen.json == {"message_type": "text", "channel": "viber_service",
                         "to": USER.lstrip("+"), "from": "AcmeBank", "text": "Hola",
                         "client_ref": message.pk}
    assert message.provider_message_id
    refused = send({"channel": "viber", "to": fakes.VIBER_UNREACHABLE, "body": "Hola"},
                   client=live.client()).json()["data"]
    failed = load(live, refused["id"])
    assert (failed.status, failed.error_code) == ("failed", "1150")


def test_live_telegram_through_the_gateway(live, fake, send):
    _account(live, fake, "telegram", {"provider": "telegram_gateway",
                                      "credentials": {"access_token": fakes.TELEGRAM_TOKEN},
                                      "config": {"sender_username": "acme"}})
    data = send({"channel": "telegram", "to": USER, "body": "246810"},
                client=live.client()).json()["data"]
    message = load(live, data["id"])
    assert (message.provider, message.status) == ("telegram_gateway", "sent")
    (seen,) = fake.hits("/sendVerificationMessage")
    assert seen.json == {"phone_number": USER, "code": "246810", "payload": message.pk,
                         "sender_username": "acme"}
    assert seen.headers["Authorization"] == f"Bearer {fakes.TELEGRAM_TOKEN}"
    refused = send({"channel": "telegram", "to": fakes.TELEGRAM_NO_ACCOUNT, "body": "2468"},
                   client=live.client()).json()["data"]
    assert load(live, refused["id"]).error_code == "PHONE_NUMBER_NOT_FOUND"


def test_live_flashcall_rings_from_the_range_plus_the_code(live, fake, send):
    _account(live, fake, "sms", {
        "provider": "twilio", "credentials": {"auth_token": fakes.TWILIO_TOKEN},
        "config": {"account_sid": fakes.TWILIO_SID, "from": "+14155550100",
                   "flashcall_prefix": "+4420790"}})
    data = send({"channel": "flashcall", "to": USER, "body": "5831"},
                client=live.client()).json()["data"]
    message = load(live, data["id"])
    assert (message.provider, message.from_address) == ("twilio", "+4420790")
    (seen,) = fake.hits("Calls.json")
    form = dict(seen.form)
    assert (form["To"], form["From"]) == (USER, "+44207905831")
    assert form["Twiml"] == "<Response><Hangup/></Response>"
    assert form["Timeout"] == "10"


def test_flashcall_prefix_is_validated(live, fake):
    response = live.client().put("/api/v1/providers/sms", {
        "provider": "twilio", "base_url": fake.url,
        "credentials": {"auth_token": fakes.TWILIO_TOKEN},
        "config": {"account_sid": fakes.TWILIO_SID, "flashcall_prefix": "4420"}},
        format="json")
    assert response.status_code == 422
    details = response.json()["error"]["details"]
    assert details.get("field", details["issues"][0]["field"]) == "config.flashcall_prefix"
