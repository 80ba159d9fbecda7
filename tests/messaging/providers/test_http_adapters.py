"""Twilio, WhatsApp Cloud and RCS adapters against loopback stand-ins of their APIs."""

from __future__ import annotations

import base64
import json
import uuid

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from messaging.models import Message
from messaging.providers.adapters.rcs import RcsBusinessProvider, rcs_message_id
from messaging.providers.adapters.twilio import TwilioProvider
from messaging.providers.adapters.whatsapp import WhatsAppCloudProvider
from messaging.providers.base import Provider, ProviderError
from messaging.providers.registry import get_provider
from platform_core.net.provider_client import CircuitBreaker

from . import fakes
from .conftest import rcs_body, twilio_body, whatsapp_body

pytestmark = pytest.mark.django_db


def _message(tenant, channel, to, **fields) -> Message:
    return Message(organization=tenant.org, channel=channel, to=to, **fields)


def test_adapters_are_registered_and_implement_the_protocol():
    for name, cls in (("twilio", TwilioProvider), ("whatsapp_cloud", WhatsAppCloudProvider),
                      ("rcs_business", RcsBusinessProvider)):
        provider = get_provider(name)
        assert isinstance(provider, cls)
        assert isinstance(provider, Provider)
    assert get_provider("smtp").channels == frozenset({"email"})


# --- Twilio ------------------------------------------------------------------------------


@pytest.fixture
def twilio(live_tenant, fake, put_account, account_row):
    put_account(live_tenant, "sms", twilio_body(
        fake, status_callback_url="https://hooks.example.com/twilio/status"))
    return account_row(live_tenant, "sms")


def test_twilio_sms_speaks_the_messages_api(live_tenant, fake, twilio):
    result = TwilioProvider().send(_message(live_tenant, "sms", "+15551230000",
                                            body="Hello there"), twilio)
    assert result.status == "queued"
    assert result.provider_message_id.startswith("SM")
    assert result.error_code is None
    (seen,) = fake.requests
    assert seen.path == f"/2010-04-01/Accounts/{fakes.TWILIO_SID}/Messages.json"
    user, _, password = base64.b64decode(seen.headers["Authorization"][6:]).decode().partition(":")
    assert (user, password) == (fakes.TWILIO_SID, fakes.TWILIO_TOKEN)
    assert seen.headers["Content-Type"] == "application/x-www-form-urlencoded"
    assert seen.form == [("To", "+15551230000"), ("From", "+15557770000"), ("Body", "Hello there"),
                         ("StatusCallback", "https://hooks.example.com/twilio/status")]


def test_twilio_mms_repeats_media_url_and_uses_the_message_sender(live_tenant, fake, twilio):
    message = _message(live_tenant, "mms", "+15551230000", from_="+15550001111", body="Look",
                       media_urls=["https://cdn.example.com/a.jpg",
                                   "https://cdn.example.com/b.png"])
    TwilioProvider().send(message, twilio)
    form = fake.requests[0].form
    assert ("From", "+15550001111") in form
    assert [v for k, v in form if k == "MediaUrl"] == ["https://cdn.example.com/a.jpg",
                                                      "https://cdn.example.com/b.png"]


def test_twilio_voice_places_a_call_with_say_twiml(live_tenant, fake, twilio):
    message = _message(live_tenant, "voice", "+15551230000", body="Your code is 1 2 3 & <4>")
    result = TwilioProvider().send(message, twilio)
    assert result.provider_message_id.startswith("CA")
    seen = fake.requests[0]
    assert seen.path.endswith("/Calls.json")
    assert dict(seen.form)["Twiml"] == (
        "<Response><Say>Your code is 1 2 3 &amp; &lt;4&gt;</Say></Response>")


def test_twilio_refusal_keeps_twilios_code_and_text(live_tenant, fake, twilio):
    result = TwilioProvider().send(_message(live_tenant, "sms", fakes.INVALID_TO, body="x"),
                                   twilio)
    assert result.status == "failed"
    assert result.provider_message_id is None
    assert result.error_code == "21211"
    assert result.error_message == f"The 'To' number {fakes.INVALID_TO} is not a valid phone number."


def test_twilio_wrong_token_is_a_failed_send(live_tenant, fake, twilio):
    twilio.credentials = {"auth_token": "wrong"}
    result = TwilioProvider().send(_message(live_tenant, "sms", "+15551230000", body="x"), twilio)
    assert (result.status, result.error_code, result.error_message) == (
        "failed", "20003", "Authenticate")


def test_twilio_messaging_service_sid_when_no_sender(live_tenant, fake, put_account, account_row):
    body = twilio_body(fake, messaging_service_sid="MG0123")
    del body["config"]["from"]
    put_account(live_tenant, "sms", body)
    TwilioProvider().send(_message(live_tenant, "sms", "+15551230000", body="x"),
                          account_row(live_tenant, "sms"))
    assert ("MessagingServiceSid", "MG0123") in fake.requests[0].form


def test_twilio_api_key_authentication(live_tenant, fake, twilio):
    twilio.credentials = {"api_key_sid": fakes.TWILIO_SID, "api_key_secret": fakes.TWILIO_TOKEN}
    result = TwilioProvider().send(_message(live_tenant, "sms", "+15551230000", body="x"), twilio)
    assert result.status == "queued"


def test_twilio_429_is_retried_then_succeeds(live_tenant, fake, twilio):
    fake.faults.extend(["429:0"])
    result = TwilioProvider().send(_message(live_tenant, "sms", "+15551230000", body="x"), twilio)
    assert result.status == "queued"
    assert len(fake.requests) == 2


def test_twilio_outage_is_a_retryable_provider_error_and_trips_the_breaker(
        live_tenant, fake, twilio):
    fake.faults.extend(["503:0"] * 3)
    with pytest.raises(ProviderError) as caught:
        TwilioProvider().send(_message(live_tenant, "sms", "+15551230000", body="x"), twilio)
    assert caught.value.retryable
    assert caught.value.code == "PROVIDER_UNAVAILABLE"
    assert len(fake.requests) == 3
    breaker = CircuitBreaker("twilio", fake.url.split("//", 1)[1])
    assert breaker.state() == "open"
    with pytest.raises(ProviderError) as caught:
        TwilioProvider().send(_message(live_tenant, "sms", "+15551230000", body="x"), twilio)
    assert caught.value.retryable
    assert len(fake.requests) == 3  # failed fast


def test_missing_account_or_setting_fails_for_good(live_tenant, fake, twilio):
    with pytest.raises(ProviderError) as caught:
        TwilioProvider().send(_message(live_tenant, "sms", "+15551230000", body="x"), None)
    assert caught.value.retryable is False
    twilio.config = {"account_sid": fakes.TWILIO_SID}  # no default sender
    with pytest.raises(ProviderError) as caught:
        TwilioProvider().send(_message(live_tenant, "sms", "+15551230000", body="x"), twilio)
    assert (caught.value.retryable, caught.value.code) == (False, "PROVIDER_MISCONFIGURED")
    assert fake.requests == []


def test_http_base_url_is_refused_at_send_time_outside_development(
        live_tenant, fake, twilio, settings):
    settings.ALLOW_PRIVATE_WEBHOOK_TARGETS = False
    with pytest.raises(ProviderError) as caught:
        TwilioProvider().send(_message(live_tenant, "sms", "+15551230000", body="x"), twilio)
    assert caught.value.retryable is False
    assert fake.requests == []


# --- WhatsApp Cloud API ------------------------------------------------------------------


@pytest.fixture
def whatsapp(live_tenant, fake, put_account, account_row):
    put_account(live_tenant, "whatsapp", whatsapp_body(fake))
    return account_row(live_tenant, "whatsapp")


def test_whatsapp_text(live_tenant, fake, whatsapp):
    result = WhatsAppCloudProvider().send(
        _message(live_tenant, "whatsapp", "+15551230000", body="Hi"), whatsapp)
    assert result.status == "queued"
    assert result.provider_message_id.startswith("wamid.")
    (seen,) = fake.requests
    assert seen.path == f"/v20.0/{fakes.WA_PHONE_ID}/messages"
    assert seen.headers["Authorization"] == f"Bearer {fakes.WA_TOKEN}"
    assert seen.headers["Content-Type"] == "application/json"
    assert seen.json == {"messaging_product": "whatsapp", "recipient_type": "individual",
                         "to": "15551230000", "type": "text",
                         "text": {"preview_url": False, "body": "Hi"}}


@pytest.mark.parametrize(("variables", "components"), [
    (["Ada", "42"], [{"type": "body", "parameters": [{"type": "text", "text": "Ada"},
                                                     {"type": "text", "text": "42"}]}]),
    ({"first_name": "Ada"}, [{"type": "body", "parameters": [
        {"type": "text", "parameter_name": "first_name", "text": "Ada"}]}]),
    ({"components": [{"type": "header", "parameters": []}]},
     [{"type": "header", "parameters": []}]),
])
def test_whatsapp_template(live_tenant, fake, whatsapp, variables, components):
    message = _message(live_tenant, "whatsapp", "+15551230000", template_name="order_update",
                       language="en_US", variables=variables)
    WhatsAppCloudProvider().send(message, whatsapp)
    payload = fake.requests[0].json
    assert payload["type"] == "template"
    assert payload["template"] == {"name": "order_update", "language": {"code": "en_US"},
                                   "components": components}


def test_whatsapp_media(live_tenant, fake, whatsapp):
    provider = WhatsAppCloudProvider()
    provider.send(_message(live_tenant, "whatsapp", "+15551230000", body="Menu",
                           media_urls=["https://cdn.example.com/menu.jpg"]), whatsapp)
    provider.send(_message(live_tenant, "whatsapp", "+15551230000", body="Invoice",
                           media_urls=["https://cdn.example.com/inv-42.pdf"]), whatsapp)
    image, document = (r.json for r in fake.requests)
    assert image["type"] == "image"
    assert image["image"] == {"link": "https://cdn.example.com/menu.jpg", "caption": "Menu"}
    assert document["type"] == "document"
    assert document["document"] == {"link": "https://cdn.example.com/inv-42.pdf",
                                    "caption": "Invoice", "filename": "inv-42.pdf"}


def test_whatsapp_errors_keep_metas_code_and_message(live_tenant, fake, whatsapp):
    result = WhatsAppCloudProvider().send(
        _message(live_tenant, "whatsapp", fakes.WA_NOT_ALLOWED, body="Hi"), whatsapp)
    assert (result.status, result.error_code) == ("failed", "131030")
    assert result.error_message == "(#131030) Recipient phone number not in allowed list"
    whatsapp.credentials = {"access_token": "expired"}
    result = WhatsAppCloudProvider().send(
        _message(live_tenant, "whatsapp", "+15551230000", body="Hi"), whatsapp)
    assert (result.status, result.error_code) == ("failed", "190")
    assert "Invalid OAuth access token" in result.error_message


# --- RCS Business Messaging --------------------------------------------------------------


@pytest.fixture
def rcs(live_tenant, fake, put_account, account_row):
    put_account(live_tenant, "rcs", rcs_body(fake))
    return account_row(live_tenant, "rcs")


def test_rcs_text(live_tenant, fake, rcs):
    message = _message(live_tenant, "rcs", "+15551230000", body="Your order shipped")
    result = RcsBusinessProvider().send(message, rcs)
    message_id = rcs_message_id(message)
    assert uuid.UUID(message_id)
    assert (result.status, result.provider_message_id) == ("sent", message_id)
    (seen,) = fake.requests
    assert seen.path == "/v1/phones/+15551230000/agentMessages"
    assert seen.query == {"messageId": [message_id], "agentId": [fakes.RCS_AGENT]}
    assert seen.headers["Authorization"] == f"Bearer {fakes.RCS_TOKEN}"
    assert seen.json == {"contentMessage": {"text": "Your order shipped"}}


def test_rcs_rich_card_for_media(live_tenant, fake, rcs):
    message = _message(live_tenant, "rcs", "+15551230000", body="New arrivals",
                       media_urls=["https://cdn.example.com/shoe.png"])
    RcsBusinessProvider().send(message, rcs)
    card = fake.requests[0].json["contentMessage"]["richCard"]["standaloneCard"]
    assert card["cardContent"]["description"] == "New arrivals"
    assert card["cardContent"]["media"]["contentInfo"]["fileUrl"] == (
        "https://cdn.example.com/shoe.png")


def test_rcs_not_capable_number_is_a_failure_with_googles_status(live_tenant, fake, rcs):
    result = RcsBusinessProvider().send(
        _message(live_tenant, "rcs", fakes.RCS_NO_RCS, body="x"), rcs)
    assert (result.status, result.error_code, result.error_message) == (
        "failed", "NOT_FOUND", "Requested entity was not found.")


def test_rcs_a_repeated_send_is_not_sent_twice(live_tenant, fake, rcs):
    message = _message(live_tenant, "rcs", "+15551230000", body="once")
    first = RcsBusinessProvider().send(message, rcs)
    again = RcsBusinessProvider().send(message, rcs)  # e.g. the task retried after a timeout
    assert again.status == "sent"
    assert again.provider_message_id == first.provider_message_id
    assert len(fake.rcs_ids) == 1


def test_rcs_service_account_token_exchange(live_tenant, fake, put_account, account_row):
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                            serialization.NoEncryption()).decode()
    fake.oauth_public_key = key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo).decode()
    service_account = {"type": "service_account", "client_email": "rbm@project.iam.example",
                       "private_key_id": "k1", "private_key": pem,
                       "token_uri": f"{fake.url}/token"}
    put_account(live_tenant, "rcs", rcs_body(fake, service_account=json.dumps(service_account)))
    account = account_row(live_tenant, "rcs")
    provider = RcsBusinessProvider()
    for text in ("one", "two"):
        result = provider.send(_message(live_tenant, "rcs", "+15551230000", body=text), account)
        assert result.status == "sent"
    assert fake.oauth_tokens == 1  # the token is cached until shortly before it expires
    assert [r.path for r in fake.requests] == ["/token", "/v1/phones/+15551230000/agentMessages",
                                               "/v1/phones/+15551230000/agentMessages"]


def test_twilio_status_callback_defaults_to_the_organizations_inbound_route(
        live_tenant, fake, put_account, account_row, settings):
    settings.PUBLIC_BASE_URL = "https://api.engage.example"
    put_account(live_tenant, "sms", twilio_body(fake))
    TwilioProvider().send(_message(live_tenant, "sms", "+15551230000", body="x"),
                          account_row(live_tenant, "sms"))
    assert dict(fake.requests[0].form)["StatusCallback"] == (
        f"https://api.engage.example/api/v1/inbound/twilio/{live_tenant.org.slug}")
