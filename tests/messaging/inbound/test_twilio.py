"""Twilio's inbound webhook: real X-Twilio-Signature (the twilio package's RequestValidator),
inbound messages creating then continuing the conversation, status callbacks in and out of
order, and the refusals of Document 1, section 5 rule 10."""

from __future__ import annotations

import pytest
from django.conf import settings

from conversations.models import Conversation

from .conftest import (
    BUSINESS_NUMBER,
    USER_NUMBER,
    events,
    inbound_messages,
    outbound,
    post_twilio,
    reload,
    twilio_path,
)

pytestmark = pytest.mark.django_db

SID = "AC" + "0" * 32


def sms(body: str = "Hello there", *, sid: str = "SM" + "1" * 32, **extra) -> dict:
    return {"AccountSid": SID, "MessageSid": sid, "SmsMessageSid": sid, "SmsSid": sid,
            "From": USER_NUMBER, "To": BUSINESS_NUMBER, "Body": body, "NumMedia": "0",
            "NumSegments": "1", "SmsStatus": "received", "ApiVersion": "2010-04-01",
            "FromCountry": "US", "ToCountry": "US", **extra}


def status(sid: str, value: str, **extra) -> dict:
    return {"AccountSid": SID, "MessageSid": sid, "SmsSid": sid, "MessageStatus": value,
            "SmsStatus": value, "From": BUSINESS_NUMBER, "To": USER_NUMBER,
            "ApiVersion": "2010-04-01", **extra}


def error_code(response) -> str:
    return response.json()["error"]["code"]


def test_inbound_sms_creates_then_continues_the_conversation(tenant, twilio_account, anon,
                                                             receiver, subscribe, on_commit):
    subscribe(receiver.url)
    with on_commit():
        first = post_twilio(anon, tenant, sms("Hi, is my order ready?"))
    assert first.status_code == 200, first.content
    assert first["Content-Type"].startswith("text/xml")
    assert b"<Response>" in first.content

    [message] = inbound_messages(tenant)
    assert (message.channel, message.from_address, message.to) == ("sms", USER_NUMBER,
                                                                   BUSINESS_NUMBER)
    assert message.status == "received"
    assert message.provider == "twilio"
    assert message.provider_message_id == "SM" + "1" * 32
    assert message.body == "Hi, is my order ready?"
    conversation = Conversation.objects.for_organization(tenant.org).get()
    assert message.conversation_id == conversation.pk
    assert conversation.contact_id == message.contact_id
    assert conversation.channel == "sms"

    with on_commit():
        second = post_twilio(anon, tenant, sms("Any news?", sid="SM" + "2" * 32))
    assert second.status_code == 200
    later = inbound_messages(tenant)[1]
    assert later.conversation_id == conversation.pk
    assert Conversation.objects.for_organization(tenant.org).count() == 1
    assert len(events(tenant, "conversation.created")) == 1

    # The receiver got message.received with the normalized block, for both messages.
    received = [r.json for r in receiver.requests if r.json["type"] == "message.received"]
    assert [r["data"]["message_id"] for r in received] == [message.pk, later.pk]
    normalized = received[0]["data"]["normalized"]
    assert normalized["channel"] == "sms"
    assert normalized["from"] == USER_NUMBER
    assert normalized["to"] == BUSINESS_NUMBER
    assert normalized["text"] == "Hi, is my order ready?"
    assert normalized["contact_id"] == message.contact_id
    assert normalized["conversation_id"] == conversation.pk
    assert normalized["received_at"]


def test_retried_webhook_makes_one_message(tenant, twilio_account, anon):
    assert post_twilio(anon, tenant, sms()).status_code == 200
    assert post_twilio(anon, tenant, sms()).status_code == 200
    assert len(inbound_messages(tenant)) == 1
    assert len(events(tenant, "message.received")) == 1


def test_mms_and_whatsapp_through_twilio(tenant, twilio_account, anon):
    media = sms("look", sid="MM" + "3" * 32, NumMedia="2",
                MediaUrl0="https://api.twilio.com/2010-04-01/Accounts/AC/Messages/MM/Media/ME1",
                MediaContentType0="image/jpeg",
                MediaUrl1="https://api.twilio.com/2010-04-01/Accounts/AC/Messages/MM/Media/ME2",
                MediaContentType1="image/png")
    assert post_twilio(anon, tenant, media).status_code == 200
    whatsapp = sms("hola", sid="SM" + "4" * 32, From=f"whatsapp:{USER_NUMBER}",
                   To=f"whatsapp:{BUSINESS_NUMBER}")
    assert post_twilio(anon, tenant, whatsapp).status_code == 200
    mms, wa = inbound_messages(tenant)
    assert mms.channel == "mms"
    assert len(mms.media_urls) == 2
    assert (wa.channel, wa.from_address, wa.to) == ("whatsapp", USER_NUMBER, BUSINESS_NUMBER)
    assert mms.conversation_id != wa.conversation_id  # one thread per contact and channel


def test_bad_missing_and_misdirected_signatures(tenant, other_tenant, twilio_account, anon):
    params = sms()
    wrong_token = post_twilio(anon, tenant, params, token="not-the-token")
    assert wrong_token.status_code == 401
    assert error_code(wrong_token) == "INVALID_SIGNATURE"
    assert wrong_token.json()["error"]["message"]

    missing = post_twilio(anon, tenant, params, signature="")
    assert (missing.status_code, error_code(missing)) == (401, "INVALID_SIGNATURE")

    # Signed for one set of parameters, sent with another.
    from twilio.request_validator import RequestValidator

    from .conftest import TWILIO_TOKEN

    url = f"{settings.PUBLIC_BASE_URL}{twilio_path(tenant)}"
    signature = RequestValidator(TWILIO_TOKEN).compute_signature(url, params)
    tampered = post_twilio(anon, tenant, {**params, "Body": "STOP"}, signature=signature)
    assert (tampered.status_code, error_code(tampered)) == (401, "INVALID_SIGNATURE")

    # Signed for another organization's URL (same token).
    other_url = f"{settings.PUBLIC_BASE_URL}{twilio_path(other_tenant)}"
    moved = post_twilio(anon, tenant, params, url=other_url)
    assert (moved.status_code, error_code(moved)) == (401, "INVALID_SIGNATURE")

    # Unknown organization, and an organization without a Twilio account: same answer.
    unknown = post_twilio(anon, tenant, params, path="/api/v1/inbound/twilio/no-such-org")
    assert (unknown.status_code, error_code(unknown)) == (401, "INVALID_SIGNATURE")
    no_account = post_twilio(anon, other_tenant, params)
    assert (no_account.status_code, error_code(no_account)) == (401, "INVALID_SIGNATURE")
    assert inbound_messages(tenant) == []


def test_signature_with_default_port_is_accepted(tenant, twilio_account, anon, settings):
    settings.PUBLIC_BASE_URL = "https://hooks.example.com"
    path = twilio_path(tenant)
    response = post_twilio(anon, tenant, sms(), url=f"https://hooks.example.com:443{path}")
    assert response.status_code == 200, response.content


def test_query_string_is_part_of_the_signed_url(tenant, twilio_account, anon):
    path = f"{twilio_path(tenant)}?source=status"
    ok = post_twilio(anon, tenant, sms(), path=path)
    assert ok.status_code == 200, ok.content
    without_query = post_twilio(anon, tenant, sms(sid="SM" + "9" * 32), path=path,
                                url=f"{settings.PUBLIC_BASE_URL}{twilio_path(tenant)}")
    assert without_query.status_code == 401


def test_empty_body_is_webhook_body_missing(tenant, twilio_account, anon):
    response = anon.post(twilio_path(tenant), data="",
                         content_type="application/x-www-form-urlencoded",
                         HTTP_X_TWILIO_SIGNATURE="x")
    assert response.status_code == 400
    assert error_code(response) == "WEBHOOK_BODY_MISSING"


def test_forwarded_host_is_honored_only_behind_a_trusted_proxy(tenant, twilio_account, anon,
                                                               settings):
    public = f"https://hooks.example.com{twilio_path(tenant)}"
    headers = {"HTTP_X_FORWARDED_HOST": "hooks.example.com", "HTTP_X_FORWARDED_PROTO": "https"}
    settings.TRUST_X_FORWARDED_FOR = False
    refused = post_twilio(anon, tenant, sms(), url=public, **headers)
    assert refused.status_code == 401
    settings.TRUST_X_FORWARDED_FOR = True
    accepted = post_twilio(anon, tenant, sms(), url=public, **headers)
    assert accepted.status_code == 200, accepted.content


def test_status_callbacks_move_forward_only(tenant, twilio_account, anon):
    message = outbound(tenant, provider="twilio", provider_message_id="SM" + "5" * 32)
    sid = message.provider_message_id
    assert post_twilio(anon, tenant, status(sid, "sent")).status_code == 200
    assert reload(message).status == "sent"
    assert post_twilio(anon, tenant, status(sid, "delivered")).status_code == 200
    assert reload(message).status == "delivered"
    # Out of order: a late "sent" (and "sending") never moves it back.
    assert post_twilio(anon, tenant, status(sid, "sent")).status_code == 200
    assert post_twilio(anon, tenant, status(sid, "sending")).status_code == 200
    assert reload(message).status == "delivered"
    assert [e.type for e in events(tenant) if e.type.startswith("message.")] == [
        "message.sent", "message.delivered"]


def test_delivered_before_sent_and_failure_with_error_code(tenant, twilio_account, anon):
    early = outbound(tenant, provider="twilio", provider_message_id="SM" + "6" * 32)
    assert post_twilio(anon, tenant, status(early.provider_message_id, "delivered")).status_code \
        == 200
    assert post_twilio(anon, tenant, status(early.provider_message_id, "sent")).status_code == 200
    assert reload(early).status == "delivered"

    failing = outbound(tenant, provider="twilio", provider_message_id="SM" + "7" * 32,
                       status="sent")
    response = post_twilio(anon, tenant, status(failing.provider_message_id, "failed",
                                                ErrorCode="30003",
                                                ErrorMessage="Unreachable destination handset"))
    assert response.status_code == 200
    failed = reload(failing)
    assert (failed.status, failed.error_code) == ("failed", "30003")
    [event] = events(tenant, "message.failed")
    assert event.data["message_id"] == failing.pk
    assert event.data["error_code"] == "30003"
    # A late delivery receipt after the terminal failure is ignored.
    post_twilio(anon, tenant, status(failing.provider_message_id, "delivered"))
    assert reload(failing).status == "failed"


def test_receipt_for_unknown_message_is_acknowledged(tenant, twilio_account, anon):
    response = post_twilio(anon, tenant, status("SM" + "8" * 32, "delivered"))
    assert response.status_code == 200


def test_voice_call_status_callback(tenant, twilio_account, anon):
    call = outbound(tenant, provider="twilio", provider_message_id="CA" + "1" * 32,
                    channel="voice")
    params = {"AccountSid": SID, "CallSid": call.provider_message_id, "CallStatus": "completed",
              "From": BUSINESS_NUMBER, "To": USER_NUMBER, "ApiVersion": "2010-04-01"}
    assert post_twilio(anon, tenant, params).status_code == 200
    assert reload(call).status == "delivered"


def test_stop_through_twilio_blocks_later_sends(tenant, twilio_account, anon):
    assert post_twilio(anon, tenant, sms("stop", sid="SM" + "a" * 32)).status_code == 200
    response = tenant.client().post("/api/v1/messages", {
        "channel": "sms", "to": USER_NUMBER, "from": BUSINESS_NUMBER, "body": "Deals"},
        format="json")
    assert response.status_code == 422
    assert response.json()["error"]["code"] == "RECIPIENT_OPTED_OUT"


def test_keyword_reply_as_twiml_only_when_enabled(tenant, twilio_account, anon):
    quiet = post_twilio(anon, tenant, sms("HELP", sid="SM" + "b" * 32))
    assert b"<Message>" not in quiet.content
    twilio_account.config = {**twilio_account.config, "keyword_replies": True}
    twilio_account.save()
    reply = post_twilio(anon, tenant, sms("help", sid="SM" + "c" * 32))
    assert reply.status_code == 200
    assert b"<Message>Reply STOP to unsubscribe. Msg&amp;Data rates may apply.</Message>" in \
        reply.content
    # A retried webhook is not answered twice.
    retried = post_twilio(anon, tenant, sms("help", sid="SM" + "c" * 32))
    assert b"<Message>" not in retried.content


def test_public_webhook_url_for_provider_consoles(tenant, settings):
    from messaging.inbound.public_urls import webhook_url

    settings.PUBLIC_BASE_URL = "https://api.example.com"
    assert webhook_url(tenant.org, "twilio") == \
        f"https://api.example.com/api/v1/inbound/twilio/{tenant.org.slug}"
    assert webhook_url(tenant.org, "whatsapp_cloud").endswith(f"/inbound/whatsapp/{tenant.org.slug}")
    assert webhook_url(tenant.org, "rcs_business").endswith(f"/inbound/rcs/{tenant.org.slug}")
