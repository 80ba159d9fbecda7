"""WhatsApp Cloud API webhook: Meta's subscription check, X-Hub-Signature-256 over the raw
body, per-item timestamps (STALE_WEBHOOK), inbound messages and statuses[] receipts."""

from __future__ import annotations

import json
import time

import pytest

from conversations.models import Conversation

from .conftest import (
    META_VERIFY_TOKEN,
    USER_NUMBER,
    events,
    inbound_messages,
    meta_signature,
    outbound,
    post_whatsapp,
    reload,
    wa_status,
    wa_text,
    whatsapp_path,
    whatsapp_payload,
)

pytestmark = pytest.mark.django_db


def error_code(response) -> str:
    return response.json()["error"]["code"]


def test_subscription_verification(tenant, whatsapp_account, anon):
    path = whatsapp_path(tenant)
    ok = anon.get(path, {"hub.mode": "subscribe", "hub.verify_token": META_VERIFY_TOKEN,
                         "hub.challenge": "1158201444"})
    assert ok.status_code == 200
    assert ok.content == b"1158201444"
    wrong = anon.get(path, {"hub.mode": "subscribe", "hub.verify_token": "nope",
                            "hub.challenge": "1158201444"})
    assert wrong.status_code == 403
    assert error_code(wrong) == "WEBHOOK_VERIFICATION_FAILED"
    unknown = anon.get("/api/v1/inbound/whatsapp/nobody",
                       {"hub.mode": "subscribe", "hub.verify_token": META_VERIFY_TOKEN,
                        "hub.challenge": "1"})
    assert unknown.status_code == 403


def test_inbound_message_creates_then_continues(tenant, whatsapp_account, anon, receiver,
                                                subscribe, on_commit):
    subscribe(receiver.url)
    with on_commit():
        response = post_whatsapp(anon, tenant, whatsapp_payload(messages=[wa_text("Hola")]))
    assert response.status_code == 200, response.content
    assert response.json()["data"]["received"] == 1
    [message] = inbound_messages(tenant)
    assert (message.channel, message.from_address, message.to, message.body) == (
        "whatsapp", USER_NUMBER, "+14155550100", "Hola")
    assert message.provider_message_id == "wamid.IN1"
    with on_commit():
        post_whatsapp(anon, tenant, whatsapp_payload(messages=[wa_text("Sigo aquí",
                                                                       wamid="wamid.IN2")]))
    first, second = inbound_messages(tenant)
    assert first.conversation_id == second.conversation_id
    conversation = Conversation.objects.for_organization(tenant.org).get()
    assert conversation.channel == "whatsapp"
    received = [r.json for r in receiver.requests if r.json["type"] == "message.received"]
    assert [r["data"]["normalized"]["text"] for r in received] == ["Hola", "Sigo aquí"]
    assert {r["data"]["normalized"]["conversation_id"] for r in received} == {conversation.pk}


def test_media_and_interactive_replies(tenant, whatsapp_account, anon):
    now = str(int(time.time()))
    image = {"from": "14155550123", "id": "wamid.IMG", "timestamp": now, "type": "image",
             "image": {"id": "1234567890", "mime_type": "image/jpeg", "caption": "receipt"}}
    button = {"from": "14155550123", "id": "wamid.BTN", "timestamp": now,
              "type": "interactive",
              "interactive": {"type": "button_reply", "button_reply": {"id": "yes",
                                                                       "title": "Yes please"}}}
    assert post_whatsapp(anon, tenant, whatsapp_payload(messages=[image, button])) \
        .status_code == 200
    media, reply = inbound_messages(tenant)
    assert media.body == "receipt"
    assert media.media_urls == ["https://graph.facebook.com/1234567890"]
    assert reply.body == "Yes please"


def test_bad_and_missing_signature(tenant, whatsapp_account, anon):
    payload = whatsapp_payload(messages=[wa_text("hi")])
    wrong = post_whatsapp(anon, tenant, payload, secret="other-secret")
    assert (wrong.status_code, error_code(wrong)) == (401, "INVALID_SIGNATURE")
    missing = post_whatsapp(anon, tenant, payload, signature="")
    assert (missing.status_code, error_code(missing)) == (401, "INVALID_SIGNATURE")
    # The signature covers the raw bytes: the same JSON re-serialized does not verify.
    raw = json.dumps(payload).encode()
    spaced = json.dumps(payload, indent=2).encode()
    response = anon.post(whatsapp_path(tenant), data=spaced, content_type="application/json",
                         HTTP_X_HUB_SIGNATURE_256=meta_signature(raw))
    assert (response.status_code, error_code(response)) == (401, "INVALID_SIGNATURE")
    assert inbound_messages(tenant) == []


def test_stale_and_missing_timestamps(tenant, whatsapp_account, anon):
    old = int(time.time()) - 3600
    stale = post_whatsapp(anon, tenant, whatsapp_payload(messages=[wa_text("old", ts=old)]))
    assert (stale.status_code, error_code(stale)) == (401, "STALE_WEBHOOK")
    assert stale.json()["error"]["details"]["reason"] == "out_of_window"
    future = post_whatsapp(anon, tenant, whatsapp_payload(
        messages=[wa_text("future", ts=int(time.time()) + 3600)]))
    assert (future.status_code, error_code(future)) == (401, "STALE_WEBHOOK")
    missing = post_whatsapp(anon, tenant, whatsapp_payload(messages=[wa_text("no ts", ts=False)]))
    assert (missing.status_code, error_code(missing)) == (401, "STALE_WEBHOOK")
    assert missing.json()["error"]["details"]["reason"] == "missing"
    assert inbound_messages(tenant) == []


def test_tolerance_is_configurable(tenant, whatsapp_account, anon, settings):
    settings.INBOUND_WEBHOOK_TOLERANCE_SECONDS = 7200
    old = int(time.time()) - 3600
    response = post_whatsapp(anon, tenant, whatsapp_payload(messages=[wa_text("ok", ts=old)]))
    assert response.status_code == 200


def test_empty_body(tenant, whatsapp_account, anon):
    response = anon.post(whatsapp_path(tenant), data=b"", content_type="application/json",
                         HTTP_X_HUB_SIGNATURE_256=meta_signature(b""))
    assert (response.status_code, error_code(response)) == (400, "WEBHOOK_BODY_MISSING")


def test_status_receipts_out_of_order(tenant, whatsapp_account, anon):
    message = outbound(tenant, provider="whatsapp_cloud", provider_message_id="wamid.OUT1",
                       channel="whatsapp")
    response = post_whatsapp(anon, tenant, whatsapp_payload(
        statuses=[wa_status("wamid.OUT1", "read")]))
    assert response.status_code == 200, response.content
    assert response.json()["data"]["receipts_applied"] == 1
    assert reload(message).status == "delivered"
    late = post_whatsapp(anon, tenant, whatsapp_payload(
        statuses=[wa_status("wamid.OUT1", "sent"), wa_status("wamid.OUT1", "delivered")]))
    assert late.json()["data"] == {"received": 0, "duplicates": 0, "receipts_applied": 0,
                                   "receipts_ignored": 2, "template_updates": 0}
    assert reload(message).status == "delivered"


def test_failed_status_carries_the_error(tenant, whatsapp_account, anon):
    message = outbound(tenant, provider="whatsapp_cloud", provider_message_id="wamid.OUT2",
                       channel="whatsapp", status="sent")
    errors = [{"code": 131047, "title": "Re-engagement message",
               "message": "Re-engagement message"}]
    post_whatsapp(anon, tenant, whatsapp_payload(
        statuses=[wa_status("wamid.OUT2", "failed", errors=errors)]))
    failed = reload(message)
    assert (failed.status, failed.error_code, failed.error_message) == (
        "failed", "131047", "Re-engagement message")
    [event] = events(tenant, "message.failed")
    assert event.data["error_code"] == "131047"


def test_stale_receipts_are_refused_too(tenant, whatsapp_account, anon):
    message = outbound(tenant, provider="whatsapp_cloud", provider_message_id="wamid.OUT3",
                       channel="whatsapp")
    response = post_whatsapp(anon, tenant, whatsapp_payload(
        statuses=[wa_status("wamid.OUT3", "delivered", ts=int(time.time()) - 86400)]))
    assert (response.status_code, error_code(response)) == (401, "STALE_WEBHOOK")
    assert reload(message).status == "queued"


def test_template_decisions_on_the_same_callback_url(tenant, whatsapp_account, anon):
    from templates.models import MessageTemplate

    MessageTemplate.objects.for_organization(tenant.org).create(
        organization=tenant.org, name="order_update", channel="whatsapp", language="en",
        components=[{"type": "BODY", "text": "x"}])
    payload = {"object": "whatsapp_business_account", "entry": [{"id": "102290129340398",
               "changes": [{"field": "message_template_status_update",
                            "value": {"event": "APPROVED", "message_template_id": 12345,
                                      "message_template_name": "order_update",
                                      "message_template_language": "en", "reason": None}}]}]}
    response = post_whatsapp(anon, tenant, payload)
    assert response.status_code == 200, response.content
    assert response.json()["data"]["template_updates"] == 1
    row = MessageTemplate.objects.for_organization(tenant.org).get(name="order_update")
    assert row.status == "approved"
