"""Fallback chains (0-conventions.md section 6): on failure of the primary, or without a
delivery receipt within fallback_after_seconds, a child message goes out on the next
channel; never twice, and nothing more once a message of the chain is delivered."""

from __future__ import annotations

from datetime import timedelta

import pytest
import time_machine
from django.utils import timezone

from messaging import services
from messaging.tasks import dispatch_due
from platform_core.tenancy.context import tenant_context

from .conftest import SANDBOX_FAIL, USER, load, message_events, messages

pytestmark = pytest.mark.django_db

RICH_FAIL = "+15005550011"  # unreachable on RCS/WhatsApp, fine on SMS
RICH_NO_RECEIPT = "+15005550012"  # no receipt on RCS/WhatsApp, fine on SMS


@pytest.fixture
def sweep(commit):
    def run(seconds_ahead: float):
        with time_machine.travel(timezone.now() + timedelta(seconds=seconds_ahead), tick=True), \
                commit():
            return dispatch_due()

    return run


def chain(tenant, root_id: str) -> list:
    rows, current = [], load(tenant, root_id)
    while current is not None:
        rows.append(current)
        current = next((m for m in messages(tenant) if m.parent_id == current.pk), None)
    return rows


def test_failure_falls_back_at_once(tenant, send, receiver, make_endpoint):
    make_endpoint(receiver.url, events=["*"])
    response = send({"channel": "rcs", "to": RICH_FAIL, "body": "Your order shipped",
                     "fallback": ["sms"]})
    assert response.status_code == 202, response.content
    assert response.json()["data"]["fallback"] == ["sms"]
    primary, child = chain(tenant, response.json()["data"]["id"])
    assert (primary.channel, primary.status, primary.error_code) == ("rcs", "failed", "63003")
    assert (child.channel, child.status) == ("sms", "delivered")
    assert child.parent_id == primary.pk
    assert child.body == "Your order shipped"
    assert child.fallback == []
    assert primary.metadata["fallback"] == {"reason": "failed", "child_id": child.pk}
    # The receiver saw the primary fail and the child's whole lifecycle.
    seen = [(r.json["type"], r.json["data"].get("message_id")) for r in receiver.requests
            if r.json["type"].startswith("message.")]
    assert ("message.failed", primary.pk) in seen
    assert ("message.delivered", child.pk) in seen
    child_event = next(r.json for r in receiver.requests
                       if r.json["type"] == "message.queued"
                       and r.json["data"]["message_id"] == child.pk)
    assert child_event["data"]["parent_message_id"] == primary.pk
    # The API shows the link both ways.
    detail = tenant.client().get(f"/api/v1/messages/{child.pk}").json()["data"]
    assert detail["parent_message_id"] == primary.pk
    listed = tenant.client().get(f"/api/v1/messages?parent_id={primary.pk}").json()["data"]
    assert [m["id"] for m in listed] == [child.pk]
    assert tenant.client().get(f"/api/v1/messages/{primary.pk}").json()["data"][
        "fallback_outcome"]["child_id"] == child.pk


def test_chain_of_three_channels(tenant, send):
    root_id = send({"channel": "rcs", "to": RICH_FAIL, "body": "x",
                    "fallback": ["whatsapp", "sms"]}).json()["data"]["id"]
    rows = chain(tenant, root_id)
    assert [(m.channel, m.status) for m in rows] == [
        ("rcs", "failed"), ("whatsapp", "failed"), ("sms", "delivered")]
    assert rows[1].fallback == ["sms"]


def test_chain_ends_when_every_channel_fails(tenant, send):
    root_id = send({"channel": "rcs", "to": SANDBOX_FAIL, "body": "x",
                    "fallback": ["sms"]}).json()["data"]["id"]
    rows = chain(tenant, root_id)
    assert [(m.channel, m.status, m.error_code) for m in rows] == [
        ("rcs", "failed", "30003"), ("sms", "failed", "30003")]


def test_no_receipt_falls_back_after_the_timeout(tenant, send, sweep):
    root_id = send({"channel": "rcs", "to": RICH_NO_RECEIPT, "body": "x", "fallback": ["sms"],
                    "fallback_after_seconds": 30}).json()["data"]["id"]
    primary = load(tenant, root_id)
    assert primary.status == "sent"
    assert primary.fallback_due_at is not None
    assert sweep(10)["fallbacks"] == 0
    assert len(messages(tenant)) == 1
    assert sweep(31)["fallbacks"] == 1
    primary, child = chain(tenant, root_id)
    assert (child.channel, child.status, child.parent_id) == ("sms", "delivered", primary.pk)
    assert primary.metadata["fallback"]["reason"] == "no_delivery_receipt"
    assert primary.fallback_triggered_at is not None

    # A late receipt of the primary is recorded and sends nothing new.
    with tenant_context(tenant.org):
        assert services.message_apply_status(message=load(tenant, root_id),
                                              status="delivered") is True
    assert load(tenant, root_id).status == "delivered"
    assert sweep(120)["fallbacks"] == 0
    assert len(messages(tenant)) == 2


def test_default_timeout_is_60_seconds(tenant, send, sweep):
    root_id = send({"channel": "whatsapp", "to": RICH_NO_RECEIPT, "body": "x",
                    "fallback": ["sms"]}).json()["data"]["id"]
    assert load(tenant, root_id).fallback_after_seconds == 60
    assert sweep(55)["fallbacks"] == 0
    assert sweep(61)["fallbacks"] == 1
    assert len(messages(tenant)) == 2


def test_delivered_primary_never_falls_back(tenant, send, sweep):
    root_id = send({"channel": "rcs", "to": USER, "body": "x", "fallback": ["sms"],
                    "fallback_after_seconds": 10}).json()["data"]["id"]
    primary = load(tenant, root_id)
    assert primary.status == "delivered"
    assert primary.fallback_due_at is None
    assert sweep(3600)["fallbacks"] == 0
    assert len(messages(tenant)) == 1


def test_failure_after_the_timeout_fallback_sends_nothing_more(tenant, send, sweep, commit):
    root_id = send({"channel": "rcs", "to": RICH_NO_RECEIPT, "body": "x", "fallback": ["sms"],
                    "fallback_after_seconds": 10}).json()["data"]["id"]
    sweep(11)
    assert len(messages(tenant)) == 2
    with commit(), tenant_context(tenant.org):
        assert services.message_apply_status(message=load(tenant, root_id), status="failed",
                                             error_code="63016") is True
    assert len(messages(tenant)) == 2
    assert load(tenant, root_id).status == "failed"


def test_nothing_more_once_the_chain_is_delivered(tenant, send, sweep):
    """rcs -> whatsapp -> sms: rcs times out, whatsapp goes out, then rcs is delivered late:
    whatsapp's own timer must not send the SMS."""
    root_id = send({"channel": "rcs", "to": RICH_NO_RECEIPT, "body": "x",
                    "fallback": ["whatsapp", "sms"], "fallback_after_seconds": 10}
                   ).json()["data"]["id"]
    sweep(11)
    primary, second = chain(tenant, root_id)
    assert (second.channel, second.status) == ("whatsapp", "sent")
    with tenant_context(tenant.org):
        services.message_apply_status(message=load(tenant, root_id), status="delivered")
    assert sweep(25)["fallbacks"] == 1  # whatsapp's timer fired...
    assert len(messages(tenant)) == 2  # ...and sent nothing
    assert load(tenant, second.pk).metadata["fallback"]["skipped"] == "chain_delivered"


def test_opted_out_recipient_gets_no_fallback(tenant, send, sweep):
    from messaging.keywords import handle_keywords

    root_id = send({"channel": "rcs", "to": RICH_NO_RECEIPT, "body": "x", "fallback": ["sms"],
                    "fallback_after_seconds": 10, "from": "acme_agent"}).json()["data"]["id"]
    with tenant_context(tenant.org):
        handle_keywords(organization=tenant.org, channel="sms", sender=RICH_NO_RECEIPT,
                        recipient="+15005550006", body="STOPALL")
    sweep(11)
    assert len(messages(tenant)) == 1
    assert load(tenant, root_id).metadata["fallback"]["skipped"] == "RECIPIENT_OPTED_OUT"


def test_fallback_events_carry_the_parent(tenant, send):
    root_id = send({"channel": "rcs", "to": RICH_FAIL, "body": "x",
                    "fallback": ["sms"]}).json()["data"]["id"]
    child = chain(tenant, root_id)[1]
    child_events = message_events(tenant, child.pk)
    assert [e.type for e in child_events][:2] == ["message.queued", "message.sent"]
    for event in child_events:
        assert event.data["parent_message_id"] == root_id
