"""A verification follows its message: pending at the send, sent when the message is handed
over, failed when the delivery fails with no fallback left (events of each move); live
sends over viber, telegram and flashcall through their providers' stand-ins."""

from __future__ import annotations

import pytest

from messaging.models import Message
from tests.messaging.providers import fakes

from .conftest import USER, error_code, verify_events

pytestmark = pytest.mark.django_db

UNREACHABLE = "+15005550009"   # the sandbox's unreachable handset (error 30003)
SMS_ONLY = "+15005550011"      # fails on rcs / whatsapp / viber / telegram


def _read(tenant, verification_id: str) -> dict:
    return tenant.client().get(f"/api/v1/verify/{verification_id}").json()["data"]


def test_failed_delivery_fails_the_verification_with_its_event(send, check, tenant):
    data = send({"to": UNREACHABLE}).json()["data"]
    assert data["status"] == "pending"
    read = _read(tenant, data["verification_id"])
    assert (read["status"], read["cancel_reason"]) == ("failed", "delivery_failed")
    assert read["ended_at"] is not None
    event = verify_events(tenant.org, "verification.failed")[0]
    assert event.data["verification_id"] == data["verification_id"]
    assert (event.data["reason"], event.data["error_code"]) == ("delivery_failed", "30003")
    refused = check(data["verification_id"], data["test_code"])
    assert (refused.status_code, error_code(refused)) == (409, "VERIFICATION_DELIVERY_FAILED")


def test_the_verification_follows_the_fallback_chain(send, tenant):
    data = send({"to": SMS_ONLY, "channel": "whatsapp", "fallback": ["sms"]}).json()["data"]
    first = data["message_id"]
    read = _read(tenant, data["verification_id"])
    # WhatsApp failed, the sms child carried the code: sent, on sms, not failed.
    assert (read["status"], read["channel"]) == ("sent", "sms")
    child = Message.objects.dangerously_unscoped().get(pk=read["message_id"])
    assert (child.parent_id, child.channel, child.metadata["verification_id"]) == (
        first, "sms", data["verification_id"])
    assert not verify_events(tenant.org, "verification.failed")


def test_a_chain_failing_everywhere_fails_once(send, tenant):
    data = send({"to": UNREACHABLE, "channel": "whatsapp", "fallback": ["sms"]}).json()["data"]
    assert _read(tenant, data["verification_id"])["status"] == "failed"
    assert len(verify_events(tenant.org, "verification.failed")) == 1


def test_replayed_status_events_change_nothing(send, tenant):
    from messaging.verify.tracking import handle_batch
    from platform_core.events.models import Event

    data = send({"to": USER}).json()["data"]
    message_events = list(Event.objects.dangerously_unscoped().filter(
        type__startswith="message.", data__message_id=data["message_id"]))
    before = len(verify_events(tenant.org))
    handle_batch(message_events)
    assert len(verify_events(tenant.org)) == before
    assert _read(tenant, data["verification_id"])["status"] == "sent"


def test_a_handled_batch_is_a_fixed_number_of_statements(send, tenant,
                                                         django_assert_max_num_queries):
    from messaging.verify.tracking import handle_batch
    from platform_core.events.models import Event

    ids = [send({"to": f"+1415555{i:04d}"}).json()["data"]["verification_id"]
           for i in range(1, 5)]
    events = list(Event.objects.dangerously_unscoped().filter(type="message.sent"))
    Event.objects.dangerously_unscoped().filter(type="verification.sent").delete()
    from messaging.verify.models import Verification

    Verification.objects.dangerously_unscoped().filter(pk__in=ids).update(status="pending")
    with django_assert_max_num_queries(8):
        handle_batch(events)
    assert {_read(tenant, i)["status"] for i in ids} == {"sent"}


# --- Live mode -------------------------------------------------------------------------------


def _account(tenant, fake, channel: str, body: dict) -> None:
    response = tenant.client().put(f"/api/v1/providers/{channel}",
                                   {"base_url": fake.url, **body}, format="json")
    assert response.status_code in (200, 201), response.content


def test_live_viber_and_telegram_codes_go_through_their_providers(live, fake, post):
    _account(live, fake, "viber", {"provider": "vonage", "config": {"from": "AcmeBank"},
                                   "credentials": {"api_key": fakes.VONAGE_KEY,
                                                   "api_secret": fakes.VONAGE_SECRET}})
    _account(live, fake, "telegram", {"provider": "telegram_gateway",
                                      "credentials": {"access_token": fakes.TELEGRAM_TOKEN}})
    viber = post("send", {"to": USER, "channel": "viber"}, client=live.client())
    assert viber.status_code == 201, viber.content
    (seen,) = fake.hits("/v1/messages")
    text = seen.json["text"]
    code = "".join(c for c in text.split("code is: ")[1].split(".")[0])
    assert code not in viber.content.decode()
    assert _read(live, viber.json()["data"]["verification_id"])["status"] == "sent"
    telegram = post("send", {"to": "+14155550124", "channel": "telegram"},
                    client=live.client())
    (gateway,) = fake.hits("/sendVerificationMessage")
    assert "test_code" not in telegram.json()["data"]
    checked = post("check", {"verification_id": telegram.json()["data"]["verification_id"],
                             "code": gateway.json["code"]}, client=live.client())
    assert checked.json()["data"]["valid"] is True
    # A provider's refusal fails the verification.
    refused = post("send", {"to": fakes.VIBER_UNREACHABLE, "channel": "viber"},
                   client=live.client()).json()["data"]
    assert _read(live, refused["verification_id"])["status"] == "failed"


def test_live_flashcall_code_is_the_caller_ids_trailing_digits(live, fake, post):
    _account(live, fake, "sms", {
        "provider": "twilio", "credentials": {"auth_token": fakes.TWILIO_TOKEN},
        "config": {"account_sid": fakes.TWILIO_SID, "from": "+14155550100",
                   "flashcall_prefix": "+4420790"}})
    data = post("send", {"to": USER, "channel": "flashcall", "code_length": 4},
                client=live.client()).json()["data"]
    (call,) = fake.hits("Calls.json")
    caller_id = dict(call.form)["From"]
    assert caller_id.startswith("+4420790")
    assert len(caller_id) == len("+4420790") + 4
    assert caller_id not in str(live.client().get(
        f"/api/v1/messages/{data['message_id']}").content)
    checked = post("check", {"verification_id": data["verification_id"],
                             "code": caller_id[-4:]}, client=live.client())
    assert checked.json()["data"]["valid"] is True
