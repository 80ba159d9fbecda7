"""The test-mode lifecycle observed by a real webhook receiver on loopback, the magic failure
number, status callbacks, and the monotonic status rule (0-conventions.md 6; Document 1,
2.3 and 6.1)."""

from __future__ import annotations

from datetime import timedelta

import pytest
import time_machine
from standardwebhooks import Webhook

from messaging import services
from messaging.providers.sandbox import receipt_delay_seconds
from messaging.tasks import dispatch_due
from platform_core.tenancy.context import tenant_context
from platform_core.webhooks import signing

from .conftest import SANDBOX_FAIL, SANDBOX_NO_RECEIPT, USER, load, message_events

pytestmark = pytest.mark.django_db

FIXED = {"message_id", "channel", "from", "to", "status"}


def by_message(receiver, message_id: str) -> list[dict]:
    return [r.json for r in receiver.requests
            if r.json.get("data", {}).get("message_id") == message_id]


def test_full_lifecycle_reaches_the_webhook_receiver(tenant, receiver, make_endpoint, send):
    endpoint = make_endpoint(receiver.url, events=["*"])
    response = send({"channel": "sms", "to": USER, "body": "Your order shipped"})
    assert response.status_code == 202, response.content
    message_id = response.json()["data"]["id"]

    got = by_message(receiver, message_id)
    assert [e["type"] for e in got] == ["message.queued", "message.sent", "message.delivered"]
    for envelope, status in zip(got, ["queued", "sent", "delivered"], strict=True):
        assert set(envelope) == {"id", "type", "created_at", "data"}
        data = envelope["data"]
        assert set(data) >= FIXED
        assert data["message_id"] == message_id
        assert data["channel"] == "sms"
        assert data["to"] == USER
        assert data["from"] == "+15005550006"
        assert data["status"] == status
        # Successful transitions never carry the error fields (absent, not null).
        assert "error_code" not in data
        assert "error_message" not in data
    # Every delivery is signed with the endpoint's secret, both ways.
    for request in receiver.requests:
        headers = {k.lower(): v for k, v in request.headers.items()}
        assert signing.verify_service_signature(endpoint["secret"],
                                                headers["x-service-signature"], request.body)
        Webhook(endpoint["secret"]).verify(request.body, request.headers)

    message = load(tenant, message_id)
    assert message.status == "delivered"
    assert message.provider_message_id.startswith("SBX")
    assert message.sent_at
    assert message.delivered_at
    assert message.sent_at <= message.delivered_at
    detail = tenant.client().get(f"/api/v1/messages/{message_id}").json()["data"]
    assert detail["status"] == "delivered"
    assert detail["delivered_at"] is not None


def test_magic_number_fails_with_30003(tenant, receiver, make_endpoint, send):
    make_endpoint(receiver.url, events=["message.failed", "message.delivered"])
    response = send({"channel": "sms", "to": SANDBOX_FAIL, "body": "x"})
    assert response.status_code == 202
    assert response.json()["data"]["status"] == "queued"
    message_id = response.json()["data"]["id"]

    got = by_message(receiver, message_id)
    assert [e["type"] for e in got] == ["message.failed"]
    data = got[0]["data"]
    assert data["status"] == "failed"
    assert data["error_code"] == "30003"
    assert data["error_message"] == "Unreachable destination handset"
    detail = tenant.client().get(f"/api/v1/messages/{message_id}").json()["data"]
    assert detail["status"] == "failed"
    assert detail["error_code"] == "30003"
    assert detail["error_message"]
    assert detail["failed_at"] is not None


@pytest.mark.parametrize("channel", ["whatsapp", "rcs", "voice", "mms"])
def test_magic_number_fails_on_every_channel(tenant, send, channel):
    body = {"channel": channel, "to": SANDBOX_FAIL, "body": "x"}
    if channel == "mms":
        body["media_url"] = "https://a.example/x.png"
    message_id = send(body).json()["data"]["id"]
    message = load(tenant, message_id)
    assert (message.status, message.error_code) == ("failed", "30003")


def test_email_magic_failure(tenant, send):
    message_id = send({"channel": "email", "to": "fail@sandbox.test", "subject": "s",
                       "body": "x"}).json()["data"]["id"]
    assert load(tenant, message_id).error_code == "30003"


def test_sandbox_receipt_is_timed_work_swept_when_due(tenant, send, settings, commit):
    """With a delay the carrier double's receipt is stored work, due `sent_at` + the delay:
    no task waits for it; the timed drain delivers it once due."""
    settings.MESSAGING_SANDBOX_RECEIPT_DELAY_SECONDS = 2.5
    assert receipt_delay_seconds() == 2.5
    message_id = send({"channel": "sms", "to": USER, "body": "x"}).json()["data"]["id"]
    message = load(tenant, message_id)
    assert message.status == "sent"
    with time_machine.travel(message.sent_at + timedelta(seconds=2), tick=False), commit():
        assert dispatch_due()["sandbox_receipts"] == 0
    assert load(tenant, message_id).status == "sent"
    with time_machine.travel(message.sent_at + timedelta(seconds=3), tick=False), commit():
        assert dispatch_due()["sandbox_receipts"] == 1
    delivered = load(tenant, message_id)
    assert delivered.status == "delivered"
    assert delivered.delivered_at == message.sent_at + timedelta(seconds=3)
    assert [e.type for e in message_events(tenant, message_id)] == [
        "message.queued", "message.sent", "message.delivered"]


def test_status_callback_gets_every_transition_signed(tenant, receiver, send):
    secret = tenant.client().get("/api/v1/messaging/callback-secret").json()["data"]["secret"]
    assert secret.startswith("whsec_")
    response = send({"channel": "sms", "to": USER, "body": "x",
                     "webhook_url": receiver.url + "?message=1"})
    data = response.json()["data"]
    assert data["status_callback"] == receiver.url + "?message=1"
    got = [r for r in receiver.requests if r.path.endswith("?message=1")]
    assert [r.json["type"] for r in got] == ["message.queued", "message.sent",
                                             "message.delivered"]
    for request in got:
        headers = {k.lower(): v for k, v in request.headers.items()}
        assert signing.verify_service_signature(secret, headers["x-service-signature"],
                                                request.body)
        Webhook(secret).verify(request.body, request.headers)
        assert request.json["data"]["message_id"] == data["id"]
    # Rotating changes the key of later callbacks.
    rotated = tenant.client().post("/api/v1/messaging/callback-secret/rotate").json()["data"]
    assert rotated["secret"] != secret


def test_status_callback_is_ssrf_checked_at_delivery(tenant, send, settings, monkeypatch):
    """A callback host resolving to a private address is refused by the hardened client at
    delivery time (DNS is checked then, not when the message was accepted)."""
    from messaging import callbacks
    from platform_core.net import ssrf

    settings.ALLOW_PRIVATE_WEBHOOK_TARGETS = False
    settings.CALLBACK_RETRY_SCHEDULE = ""
    monkeypatch.setattr(ssrf, "resolve", lambda host, port: ["10.0.0.5"])
    seen = []
    real = callbacks.http.post

    def spy(url, **kwargs):
        try:
            return real(url, **kwargs)
        except callbacks.http.OutboundError as exc:
            seen.append(exc.kind)
            raise

    monkeypatch.setattr(callbacks.http, "post", spy)
    response = send({"channel": "sms", "to": SANDBOX_FAIL, "body": "x",
                     "status_callback": "https://callbacks.example.com/cb"})
    assert response.status_code == 202
    assert seen == ["unsafe_target", "unsafe_target"]  # queued and failed, no retries


# --- Monotonic statuses ------------------------------------------------------------------


def test_out_of_order_receipts_never_move_backwards(tenant, send):
    message_id = send({"channel": "sms", "to": SANDBOX_NO_RECEIPT, "body": "x"}).json()[
        "data"]["id"]
    message = load(tenant, message_id)
    assert message.status == "sent"
    with tenant_context(tenant.org):
        assert services.message_apply_status(message=message, status="delivered") is True
        assert services.message_apply_status(message=message, status="sent") is False
        assert services.message_apply_status(message=message, status="queued") is False
        assert services.message_apply_status(message=message, status="failed",
                                             error_code="30007") is False
        assert services.message_apply_status(message=message, status="delivered") is False
    message = load(tenant, message_id)
    assert message.status == "delivered"
    assert message.error_code is None
    assert [e.type for e in message_events(tenant, message_id)] == [
        "message.queued", "message.sent", "message.delivered"]


def test_delivered_receipt_before_sent_result(tenant, send):
    message_id = send({"channel": "sms", "to": SANDBOX_NO_RECEIPT, "body": "x",
                       "send_at": None}).json()["data"]["id"]
    message = load(tenant, message_id)
    # A failure after a receipt for another message id is still applied once, then final.
    with tenant_context(tenant.org):
        assert services.message_apply_status(message=message, status="undelivered",
                                             error_code="30005",
                                             error_message="Unknown destination") is True
        assert services.message_apply_status(message=message, status="delivered") is False
    events = message_events(tenant, message_id)
    assert [e.type for e in events] == ["message.queued", "message.sent", "message.failed"]
    failed = events[-1].data
    assert failed["status"] == "undelivered"
    assert (failed["error_code"], failed["error_message"]) == ("30005", "Unknown destination")


def test_failure_without_provider_error_has_no_error_fields(tenant, send):
    message_id = send({"channel": "sms", "to": SANDBOX_NO_RECEIPT, "body": "x"}).json()[
        "data"]["id"]
    with tenant_context(tenant.org):
        services.message_apply_status(message=load(tenant, message_id), status="expired")
    failed = message_events(tenant, message_id)[-1]
    assert failed.type == "message.failed"
    assert failed.data["status"] == "expired"
    assert "error_code" not in failed.data
    assert "error_message" not in failed.data


def test_provider_vocabulary_and_unknown_statuses(tenant, send):
    message_id = send({"channel": "whatsapp", "to": SANDBOX_NO_RECEIPT, "body": "x"}).json()[
        "data"]["id"]
    with tenant_context(tenant.org):
        message = load(tenant, message_id)
        assert services.message_apply_status(message=message, status="sending") is False
        assert services.message_apply_status(message=message, status="warp") is False
        assert services.message_apply_status(message=message, status="read") is True
    assert load(tenant, message_id).status == "delivered"
