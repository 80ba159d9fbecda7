"""Magic links: a signed single-use link by email (or sms), checked with its token."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import pytest

from messaging.models import Message
from messaging.verify.texts import MASK

from .conftest import USER, error_code, verify_events

pytestmark = pytest.mark.django_db

LINK_URL = "https://app.example.com/login?next=%2Fhome"


def _send(send, to: str = "Ana@Example.com", **extra):
    response = send({"to": to, "channel": "magic_link", "link_url": LINK_URL, **extra})
    assert response.status_code == 201, response.content
    return response.json()["data"]


def test_the_link_is_emailed_and_checked_once(send, post, tenant, sandbox_sent):
    data = _send(send)
    assert (data["channel"], data["to"], data["status"]) == ("magic_link", "ana@example.com",
                                                             "pending")
    link = data["test_link"]
    parts = urlsplit(link)
    assert (parts.scheme, parts.netloc, parts.path) == ("https", "app.example.com", "/login")
    query = parse_qs(parts.query)
    assert query["next"] == ["/home"]
    assert query["token"] == [data["test_code"]]
    message = Message.objects.dangerously_unscoped().get(pk=data["message_id"])
    assert (message.channel, message.subject) == ("email", f"Your {tenant.org.name} sign-in link")
    assert link in sandbox_sent[message.pk]
    assert link not in message.body
    assert MASK in message.body
    checked = post("check", {"token": data["test_code"]})
    assert checked.status_code == 200, checked.content
    body = checked.json()["data"]
    assert (body["valid"], body["status"], body["verification_id"]) == (
        True, "verified", data["verification_id"])
    again = post("check", {"token": data["test_code"]})
    assert (again.status_code, error_code(again)) == (409, "VERIFICATION_ALREADY_VERIFIED")
    assert verify_events(tenant.org)[-1].type == "verification.verified"


def test_a_phone_gets_the_link_by_sms(send, sandbox_sent):
    data = _send(send, to=USER, locale="es")
    message = Message.objects.dangerously_unscoped().get(pk=data["message_id"])
    assert message.channel == "sms"
    assert sandbox_sent[message.pk].startswith("Inicia sesión en")


@pytest.mark.parametrize("mangle", [lambda t: t[:-2] + ("AA" if t[-2:] != "AA" else "BB"),
                                    lambda t: "x" + t, lambda t: "not-a-token"])
def test_a_forged_or_altered_token_is_refused(send, post, mangle):
    data = _send(send)
    response = post("check", {"token": mangle(data["test_code"])})
    assert (response.status_code, error_code(response)) == (400, "VERIFY_LINK_INVALID")
    # The genuine one still works (a forged token spends no attempt).
    assert post("check", {"token": data["test_code"]}).json()["data"]["valid"] is True


def test_a_newer_link_supersedes_the_older(send, post):
    old = _send(send)
    _send(send)
    refused = post("check", {"token": old["test_code"]})
    assert (refused.status_code, error_code(refused)) == (409, "VERIFICATION_CANCELED")


def test_a_token_of_another_organization_is_not_found(send, post, other_tenant):
    data = _send(send)
    response = post("check", {"token": data["test_code"]}, client=other_tenant.client())
    assert (response.status_code, error_code(response)) == (404, "NOT_FOUND")


def test_live_mode_never_answers_the_link(live, fake, post):
    response = post("send", {"to": USER, "channel": "magic_link", "link_url": LINK_URL},
                    client=live.client())
    assert response.status_code == 201, response.content
    data = response.json()["data"]
    assert "test_code" not in data
    assert "test_link" not in data
    (seen,) = fake.hits("Messages.json")
    assert "token=" in dict(seen.form)["Body"]
    assert "token=" not in response.content.decode()
