"""Sends through POST /api/v1/messages reaching (or, in test mode, never reaching) providers."""

from __future__ import annotations

import pytest
from django.db import connection

from messaging.models import Message
from platform_core.tenancy.context import tenant_context

from . import fakes
from .conftest import rcs_body, twilio_body, whatsapp_body
from .test_smtp import smtp_server  # noqa: F401 - the aiosmtpd fixture

pytestmark = pytest.mark.django_db


@pytest.fixture
def send(django_capture_on_commit_callbacks):
    """POST a message and run what is queued after commit (the send task, eagerly)."""

    def do(tenant, body, expect=202):
        with django_capture_on_commit_callbacks(execute=True):
            response = tenant.client().post("/api/v1/messages", body, format="json")
        assert response.status_code == expect, response.content
        return response.json()

    return do


def _stored(tenant, message_id) -> Message:
    with tenant_context(tenant.org):
        return Message.objects.get(pk=message_id)


def _count_messages(tenant) -> int:
    with tenant_context(tenant.org):
        return Message.objects.count()


@pytest.mark.parametrize("channel", ["sms", "whatsapp", "rcs", "voice", "mms"])
def test_live_send_without_a_provider_is_503_and_stores_nothing(live_tenant, send, channel):
    body = {"channel": channel, "to": "+14155550123", "from": "+14155550199", "body": "hi"}
    if channel == "mms":
        body["media_url"] = "https://cdn.example.com/a.jpg"
    error = send(live_tenant, body, expect=503)["error"]
    assert error["code"] == "PROVIDER_NOT_WIRED"
    assert _count_messages(live_tenant) == 0


def test_live_email_without_account_or_email_url_is_503(live_tenant, send, settings):
    settings.EMAIL_URL = ""
    error = send(live_tenant, {"channel": "email", "to": "ada@example.com", "subject": "Hi",
                               "body": "Hello"}, expect=503)["error"]
    assert error["code"] == "PROVIDER_NOT_WIRED"


def test_live_sms_goes_out_through_twilio(live_tenant, fake, put_account, send):
    put_account(live_tenant, "sms", twilio_body(fake))
    data = send(live_tenant, {"channel": "sms", "to": "+14155550123", "from": "+14155550199",
                              "body": "Your code"})["data"]
    (seen,) = fake.requests
    assert dict(seen.form)["Body"] == "Your code"
    message = _stored(live_tenant, data["id"])
    assert message.provider == "twilio"
    assert message.provider_message_id.startswith("SM")
    assert message.status == "queued"  # Twilio queued it; its receipts move it on


def test_twilio_account_for_sms_also_serves_voice(live_tenant, fake, put_account, send):
    put_account(live_tenant, "sms", twilio_body(fake))
    data = send(live_tenant, {"channel": "voice", "to": "+14155550123", "from": "+14155550199",
                              "body": "Hello"})["data"]
    assert fake.requests[0].path.endswith("/Calls.json")
    assert _stored(live_tenant, data["id"]).provider_message_id.startswith("CA")


def test_live_refusal_fails_the_message_with_the_providers_code(
        live_tenant, fake, put_account, send):
    put_account(live_tenant, "whatsapp", whatsapp_body(fake))
    data = send(live_tenant, {"channel": "whatsapp", "to": fakes.WA_NOT_ALLOWED,
                              "from": "+14155550199", "body": "hi"})["data"]
    message = _stored(live_tenant, data["id"])
    assert message.status == "failed"
    assert message.error_code == "131030"
    assert message.error_message == "(#131030) Recipient phone number not in allowed list"
    response = live_tenant.client().get(f"/api/v1/messages/{data['id']}")
    assert response.json()["data"]["error_code"] == "131030"


def test_live_rcs_is_sent(live_tenant, fake, put_account, send):
    put_account(live_tenant, "rcs", rcs_body(fake))
    data = send(live_tenant, {"channel": "rcs", "to": "+14155550123", "from": "+14155550199",
                              "body": "hi"})["data"]
    message = _stored(live_tenant, data["id"])
    assert message.status == "sent"
    assert fake.requests[0].query["messageId"] == [message.provider_message_id]


def test_live_email_through_email_url(live_tenant, smtp_server, send, settings):  # noqa: F811
    settings.EMAIL_URL = f"smtp://127.0.0.1:{smtp_server.port}"
    data = send(live_tenant, {"channel": "email", "to": "ada@example.com", "subject": "Hi",
                              "body": "Hello"})["data"]
    message = _stored(live_tenant, data["id"])
    assert message.status == "sent"
    received = smtp_server.mailbox.received[0][2]
    assert received["Message-ID"] == message.provider_message_id


def test_test_mode_never_reaches_the_adapters(tenant, fake, smtp_server, put_account,  # noqa: F811
                                              send, settings):
    """A sandbox organization with accounts for every channel: nothing leaves the platform."""
    settings.EMAIL_URL = f"smtp://127.0.0.1:{smtp_server.port}"
    put_account(tenant, "sms", twilio_body(fake))
    put_account(tenant, "whatsapp", whatsapp_body(fake))
    put_account(tenant, "rcs", rcs_body(fake))
    put_account(tenant, "email", {"provider": "smtp", "config": {
        "host": "127.0.0.1", "port": smtp_server.port, "use_tls": False}})
    bodies = [
        {"channel": "sms", "to": "+14155550123", "from": "+14155550199", "body": "hi"},
        {"channel": "mms", "to": "+14155550123", "from": "+14155550199", "body": "hi",
         "media_url": "https://cdn.example.com/a.jpg"},
        {"channel": "voice", "to": "+14155550123", "from": "+14155550199", "body": "hi"},
        {"channel": "whatsapp", "to": "+14155550123", "from": "+14155550199", "body": "hi"},
        {"channel": "rcs", "to": "+14155550123", "from": "+14155550199", "body": "hi"},
        {"channel": "email", "to": "ada@example.com", "subject": "Hi", "body": "hi"},
    ]
    for body in bodies:
        data = send(tenant, body)["data"]
        assert _stored(tenant, data["id"]).provider == "sandbox"
    assert fake.requests == []
    assert smtp_server.mailbox.received == []


def test_provider_outage_is_retried_later_then_fails_with_provider_unavailable(
        live_tenant, fake, put_account, send):
    from messaging import services

    put_account(live_tenant, "sms", twilio_body(fake))
    fake.faults.extend(["503:0"] * 50)
    data = send(live_tenant, {"channel": "sms", "to": "+14155550123", "from": "+14155550199",
                              "body": "x"})["data"]
    # The client's bounded attempts opened the breaker; the send task's retries (eager in
    # tests, or the next dispatch) fail fast without calling Twilio again.
    assert len(fake.requests) == 3
    if _stored(live_tenant, data["id"]).status == "queued":
        assert services.message_dispatch(message_id=data["id"], final_attempt=True) == "failed"
    assert len(fake.requests) == 3
    message = _stored(live_tenant, data["id"])
    assert message.status == "failed"
    assert message.error_code == "PROVIDER_UNAVAILABLE"


def test_the_credentials_column_never_holds_clear_text(live_tenant, fake, put_account):
    put_account(live_tenant, "sms", twilio_body(fake))
    with connection.cursor() as cursor:
        cursor.execute("SELECT credentials_encrypted FROM providers_provideraccount")
        rows = [r[0] for r in cursor.fetchall()]
    assert rows
    assert all(fakes.TWILIO_TOKEN not in r for r in rows)


def test_a_disabled_account_is_not_used(live_tenant, fake, put_account, send):
    put_account(live_tenant, "sms", {**twilio_body(fake), "enabled": False})
    error = send(live_tenant, {"channel": "sms", "to": "+14155550123", "from": "+14155550199",
                               "body": "x"}, expect=503)["error"]
    assert error["code"] == "PROVIDER_NOT_WIRED"
    assert fake.requests == []
