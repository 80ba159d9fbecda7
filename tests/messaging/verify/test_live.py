"""Live mode: the code goes out through the organization's provider (the providers family's
loopback Twilio stand-in; `fake` and `live` come from tests/messaging/test_live.py
through conftest.py) and never appears in a
response, an event or a log line."""

from __future__ import annotations

import logging
import re

import pytest

from messaging.models import Message
from messaging.verify.texts import MASK
from platform_core.events.models import Event
from platform_core.tenancy.context import tenant_context

from .conftest import USER, error_code

pytestmark = pytest.mark.django_db


def _sent_code(fake, path: str = "Messages.json") -> str:
    (seen,) = fake.hits(path)
    form = dict(seen.form)
    return re.search(r"\d{6}", form.get("Body") or form.get("Twiml")).group(0), form


def test_live_send_never_reveals_the_code(live, fake, post, caplog):
    caplog.set_level(logging.DEBUG)
    response = post("send", {"to": USER, "channel": "sms"}, client=live.client())
    assert response.status_code == 201, response.content
    data = response.json()["data"]
    assert "test_code" not in data
    assert data["status"] == "pending"
    code, form = _sent_code(fake)
    assert (form["To"], form["From"]) == (USER, "+14155550100")
    assert code not in response.content.decode()
    read = live.client().get(f"/api/v1/verify/{data['verification_id']}")
    listed = live.client().get("/api/v1/verify")
    assert code not in read.content.decode()
    assert code not in listed.content.decode()
    checked = post("check", {"verification_id": data["verification_id"], "code": code},
                   client=live.client())
    assert checked.json()["data"]["valid"] is True
    assert code not in checked.content.decode()
    # The message: readable with the code masked, the provider's copy dropped once sent.
    message_id = data["message_id"]
    listed = live.client().get("/api/v1/messages")
    detail = live.client().get(f"/api/v1/messages/{message_id}")
    assert message_id in listed.content.decode()
    assert detail.json()["data"]["body"] == form["Body"].replace(code, MASK)
    assert code not in listed.content.decode() + detail.content.decode()
    with tenant_context(live.org):
        message = Message.objects.get(pk=message_id)
        events = list(Event.objects.all())
    assert (message.status, message.secret_body) == ("queued", None)  # Twilio accepted it
    assert {"message.queued", "verification.pending"} <= {e.type for e in events}
    assert all(code not in str(e.data) for e in events)
    logged = [r.getMessage() + str(r.args) for r in caplog.records]
    assert logged
    assert not [line for line in logged if code in line]


def test_live_voice_call_reads_the_code(live, fake, post):
    data = post("send", {"to": USER, "channel": "voice"}, client=live.client()).json()["data"]
    assert "test_code" not in data
    (seen,) = fake.hits("Calls.json")
    twiml = dict(seen.form)["Twiml"]
    digits = re.search(r"(\d, ){5}\d", twiml).group(0)
    assert twiml.count(digits) == 2
    detail = live.client().get(f"/api/v1/messages/{data['message_id']}").json()["data"]
    assert detail["body"].count(MASK) == 2
    assert digits not in detail["body"]


def test_live_bulk_rows_carry_no_code(live, fake, post):
    response = post("bulk", {"recipients": [USER, "+14155550124"]}, client=live.client())
    assert response.status_code == 201
    assert all("test_code" not in row for row in response.json()["data"]["results"])
    assert len(fake.hits("Messages.json")) == 2


def test_channel_without_provider_is_503_and_works_first_in_a_chain(live, fake, post):
    for channel in ("rcs", "whatsapp", "viber", "telegram", "flashcall", "email"):
        response = post("send", {"to": USER if channel != "email" else "a@example.com",
                                 "channel": channel}, client=live.client())
        assert (response.status_code, error_code(response)) == (503, "PROVIDER_NOT_WIRED"), \
            channel
        assert response.json()["error"]["details"]["channel"] == channel
    chained = post("send", {"to": USER, "channel": "rcs", "fallback": ["sms"]},
                   client=live.client())
    assert chained.status_code == 201, chained.content
    assert (chained.json()["data"]["channel"], chained.json()["data"]["fallback"]) == ("sms", [])
    assert len(fake.hits("Messages.json")) == 1


def test_live_sna_fails_closed_without_an_operator(live, post):
    response = post("send", {"to": USER, "channel": "sna", "device_token": "t"},
                    client=live.client())
    assert (response.status_code, error_code(response)) == (503, "PROVIDER_NOT_WIRED")
