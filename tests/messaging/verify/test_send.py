"""POST /api/v1/verify/send in test mode: channels, options, texts, supersede, errors."""

from __future__ import annotations

import pytest

from messaging.models import Message
from messaging.verify.models import Verification
from messaging.verify.texts import MASK
from platform_core.tenancy.context import tenant_context

from .conftest import USER, error_code, verify_events

pytestmark = pytest.mark.django_db


def _message(tenant, message_id: str) -> Message:
    with tenant_context(tenant.org):
        return Message.objects.get(pk=message_id)


def test_send_answers_201_with_the_test_code_and_stores_only_a_hash(send, tenant,
                                                                   sandbox_sent):
    response = send({"to": USER})
    assert response.status_code == 201, response.content
    data = response.json()["data"]
    assert data["verification_id"].startswith("ver_")
    # Stored pending; the message's status event moves it to sent.
    assert (data["status"], data["channel"], data["to"]) == ("pending", "sms", USER)
    assert data["code_length"] == 6
    assert data["max_attempts"] == 3
    code = data["test_code"]
    assert len(code) == 6
    assert code.isdigit()
    with tenant_context(tenant.org):
        row = Verification.objects.get(pk=data["verification_id"])
    assert code not in row.code_hash
    assert len(row.code_hash) == 64
    assert (row.expires_at - row.created_at).total_seconds() == 600
    # The message went through the messaging pipeline (sandbox double) and was delivered.
    message = _message(tenant, data["message_id"])
    assert (message.channel, message.to, message.provider) == ("sms", USER, "sandbox")
    assert message.status == "delivered"
    assert f"verification code is: {code}" in sandbox_sent[message.pk]
    # Stored readable with the code masked; the real text is gone once sent.
    assert message.body == sandbox_sent[message.pk].replace(code, MASK)
    assert message.secret_body is None
    assert [e.type for e in verify_events(tenant.org)] == ["verification.pending",
                                                           "verification.sent"]
    assert tenant.client().get(f"/api/v1/verify/{data['verification_id']}").json()[
        "data"]["status"] == "sent"
    assert "code" not in str(verify_events(tenant.org)[0].data.get("test_code", ""))


@pytest.mark.parametrize("channel", ["sms", "whatsapp", "voice", "rcs", "viber", "telegram",
                                     "flashcall"])
def test_pipeline_channels_in_test_mode(send, post, tenant, channel):
    data = send({"to": USER, "channel": channel}).json()["data"]
    assert data["channel"] == channel
    assert data["status"] == "pending"
    message = _message(tenant, data["message_id"])
    assert (message.channel, message.provider) == (channel, "sandbox")
    assert message.status == "delivered"
    read = tenant.client().get(f"/api/v1/verify/{data['verification_id']}").json()["data"]
    assert (read["status"], read["message_id"]) == ("sent", message.pk)
    checked = post("check", {"verification_id": data["verification_id"],
                             "code": data["test_code"]})
    assert checked.json()["data"]["valid"] is True


def test_voice_reads_the_digits_one_by_one(send, tenant, sandbox_sent):
    data = send({"to": USER, "channel": "voice", "code_length": 4}).json()["data"]
    spoken = ", ".join(data["test_code"])
    assert sandbox_sent[data["message_id"]].count(spoken) == 2  # said twice
    assert _message(tenant, data["message_id"]).body.count(MASK) == 2


def test_email_channel(send, tenant, sandbox_sent):
    response = send({"to": "Someone@Example.com", "channel": "email", "locale": "fr"})
    assert response.status_code == 201, response.content
    data = response.json()["data"]
    message = _message(tenant, data["message_id"])
    assert (data["to"], message.channel) == ("someone@example.com", "email")
    assert message.subject.startswith("Votre code de vérification")
    assert data["test_code"] in sandbox_sent[message.pk]
    assert data["test_code"] not in message.body + message.subject


@pytest.mark.parametrize("channel", ["telegram", "flashcall"])
def test_code_channels_hand_the_provider_the_code_alone(send, tenant, sandbox_sent, channel):
    data = send({"to": USER, "channel": channel}).json()["data"]
    message = _message(tenant, data["message_id"])
    # Telegram Gateway writes its own text; a flash call's caller id ends with the code.
    assert sandbox_sent[message.pk] == data["test_code"]
    assert message.body == MASK
    if channel == "flashcall":
        assert message.from_address == "+4420700"  # the sandbox's caller id range


def test_viber_sends_the_localized_text(send, tenant, sandbox_sent):
    data = send({"to": USER, "channel": "viber", "locale": "de"}).json()["data"]
    message = _message(tenant, data["message_id"])
    assert f"Bestätigungscode lautet: {data['test_code']}" in sandbox_sent[message.pk]
    assert message.from_address == "SandboxService"


@pytest.mark.parametrize(("locale", "words"), [
    ("en", "Your Org"), ("es", "Tu código"), ("fr", "Votre code"), ("de", "Bestätigungscode"),
    ("pt", "O seu código"), ("pt-BR", "O seu código")])
def test_locale_default_texts(send, tenant, sandbox_sent, locale, words):
    data = send({"to": USER, "locale": locale}).json()["data"]
    body = sandbox_sent[data["message_id"]]
    assert words in body
    assert data["test_code"] in body


def test_code_length_bounds(send):
    for length in (4, 8):
        data = send({"to": USER, "code_length": length}).json()["data"]
        assert len(data["test_code"]) == length
    for length in (3, 9):
        response = send({"to": USER, "code_length": length})
        assert response.status_code == 422
        assert error_code(response) == "VALIDATION_ERROR"
        assert response.json()["error"]["details"]["issues"][0]["field"] == "code_length"


def test_max_attempts_bounds(send):
    assert send({"to": USER, "max_attempts": 10}).json()["data"]["max_attempts"] == 10
    for value in (0, 11):
        assert error_code(send({"to": USER, "max_attempts": value})) == "VALIDATION_ERROR"


@pytest.mark.parametrize(("body", "status", "code"), [
    ({"to": "not a number"}, 422, "INVALID_PHONE_NUMBER"),
    ({"to": "nope", "channel": "email"}, 422, "INVALID_EMAIL"),
    ({"channel": "sms"}, 422, "VALIDATION_ERROR"),
    ({"to": USER, "channel": "pigeon"}, 422, "VALIDATION_ERROR"),
    ({"to": USER, "locale": "xx"}, 422, "VALIDATION_ERROR"),
    ({"to": USER, "profile_id": "vpf_unknown"}, 422, "VALIDATION_ERROR"),
    ({"to": USER, "fallback": ["email"]}, 422, "VALIDATION_ERROR"),
    ({"to": USER, "template_variables": {f"k{i}": "v" for i in range(33)}}, 422,
     "VALIDATION_ERROR"),
    ({"to": USER, "channel": "magic_link"}, 422, "VALIDATION_ERROR"),  # no link_url
    ({"to": USER, "channel": "magic_link", "link_url": "ftp://x.test/"}, 422,
     "VALIDATION_ERROR"),
    ({"to": USER, "channel": "magic_link", "link_url": "https://app.test/in",
      "fallback": ["sms"]}, 422, "VALIDATION_ERROR"),
    ({"to": USER, "channel": "telegram", "fallback": ["sms"]}, 422, "VALIDATION_ERROR"),
])
def test_bad_sends_answer_their_code_and_store_nothing(send, tenant, body, status, code):
    response = send(body)
    assert (response.status_code, error_code(response)) == (status, code), response.content
    with tenant_context(tenant.org):
        assert not Verification.objects.exists()


@pytest.mark.parametrize("channel", ["totp", "push", "backup_code"])
def test_factor_channels_point_at_the_factor_endpoints(send, channel):
    response = send({"to": USER, "channel": channel})
    assert response.status_code == 422
    error = response.json()["error"]
    assert error["code"] == "VERIFY_USE_FACTOR_ENDPOINT"
    assert error["details"]["factor_endpoint"] == "/api/v1/verify/factors/totp"


def test_a_new_send_supersedes_the_open_one(send, check, tenant):
    first = send({"to": USER}).json()["data"]
    second = send({"to": USER}).json()["data"]
    old = tenant.client().get(f"/api/v1/verify/{first['verification_id']}").json()["data"]
    assert (old["status"], old["cancel_reason"]) == ("canceled", "superseded")
    refused = check(first["verification_id"], first["test_code"])
    assert (refused.status_code, error_code(refused)) == (409, "VERIFICATION_CANCELED")
    assert check(second["verification_id"], second["test_code"]).json()["data"]["valid"]
    types = [(e.type, e.data["verification_id"]) for e in verify_events(tenant.org)]
    assert ("verification.canceled", first["verification_id"]) in types
    canceled = [e for e in verify_events(tenant.org) if e.type == "verification.canceled"]
    assert canceled[0].data["reason"] == "superseded"


def test_profile_defaults_apply(send, tenant, sandbox_sent):
    profile = tenant.client().post("/api/v1/verify/profiles", {
        "name": "Acme Login", "channel": "whatsapp", "code_length": 8, "max_attempts": 5,
        "expiration_seconds": 120, "locale": "de",
        "template": "ACME {code} ({minutes} min) {app}"}, format="json").json()["data"]
    data = send({"to": USER, "channel": None, "profile_id": profile["id"],
                 "template_variables": {"app": "Portal"}}).json()["data"]
    assert (data["channel"], data["code_length"], data["max_attempts"], data["locale"]) == (
        "whatsapp", 8, 5, "de")
    assert data["profile_id"] == profile["id"]
    assert sandbox_sent[data["message_id"]] == f"ACME {data['test_code']} (2 min) Portal"
    assert _message(tenant, data["message_id"]).body == f"ACME {MASK} (2 min) Portal"


def test_request_fields_override_the_profile(send, tenant):
    profile = tenant.client().post("/api/v1/verify/profiles", {
        "name": "P", "channel": "voice", "code_length": 8}, format="json").json()["data"]
    data = send({"to": USER, "profile_id": profile["id"], "code_length": 5}).json()["data"]
    assert (data["channel"], len(data["test_code"])) == ("sms", 5)


def test_sna_with_a_device_token_is_verified_without_a_code(send, tenant):
    response = send({"to": USER, "channel": "sna", "device_token": "dev-token-1"})
    assert response.status_code == 201, response.content
    data = response.json()["data"]
    assert (data["status"], data["channel"]) == ("verified", "sna")
    assert "test_code" not in data
    assert [e.type for e in verify_events(tenant.org)] == ["verification.verified"]


def test_sna_mismatch_fails_and_without_token_is_503(send):
    data = send({"to": USER, "channel": "sna", "device_token": "sandbox-mismatch"}).json()
    assert data["data"]["status"] == "failed"
    response = send({"to": USER, "channel": "sna"})
    assert (response.status_code, error_code(response)) == (503, "PROVIDER_NOT_WIRED")


def test_rcs_falls_back_in_the_pipeline_when_the_recipient_is_not_on_rcs(send, tenant,
                                                                         sandbox_sent):
    # +15005550011 is unreachable on RCS in the sandbox: the pipeline's fallback sends SMS.
    data = send({"to": "+15005550011", "channel": "rcs", "fallback": ["sms"]}).json()["data"]
    assert (data["channel"], data["fallback"]) == ("rcs", ["sms"])
    with tenant_context(tenant.org):
        child = Message.objects.get(parent_id=data["message_id"])
    assert (child.channel, child.status) == ("sms", "delivered")
    # The fallback child carried the real text to the provider; neither row keeps it.
    assert data["test_code"] in sandbox_sent[child.pk]
    assert data["test_code"] not in child.body
    assert child.secret_body is None
    assert _message(tenant, data["message_id"]).secret_body is None


def test_idempotency_key_replays_the_first_answer(send):
    headers = {"HTTP_IDEMPOTENCY_KEY": "verify-1"}
    first = send({"to": USER}, **headers)
    again = send({"to": USER}, **headers)
    assert again.status_code == 201
    assert again.json()["data"]["verification_id"] == first.json()["data"]["verification_id"]


def test_scopes(tenant, send):
    key = tenant.client().post("/api/v1/api-keys", {
        "name": "read", "type": "secret", "scopes": ["verify:read"]}, format="json")
    raw = key.json()["data"]["key"]
    response = send({"to": USER}, client=tenant.client(raw))
    assert (response.status_code, error_code(response)) == (403, "INSUFFICIENT_PERMISSIONS")
    assert tenant.client(raw).get("/api/v1/verify").status_code == 200
