"""POST /api/v1/messages (and /sms, /whatsapp, /rcs): the accepted message and every
pre-send validation code (Document 2, 4.4; Document 1, section 7; 0-conventions.md 6)."""

from __future__ import annotations

import pytest

from messaging.models import Message
from platform_core.tenancy.context import tenant_context
from tests.conftest import make_tenant
from tests.platform_core.identity.conftest import make_key

from .conftest import BUSINESS, USER, load, messages

pytestmark = pytest.mark.django_db

URL = "/api/v1/messages"


def error(response, status: int, code: str) -> dict:
    assert response.status_code == status, response.content
    body = response.json()
    assert body["error"]["code"] == code, body
    assert body["error"]["status"] == status
    return body["error"]


def test_accepted_message_is_202_queued(tenant, send):
    response = send({"channel": "sms", "to": USER, "from": BUSINESS, "body": "Hello"})
    assert response.status_code == 202, response.content
    data = response.json()["data"]
    assert data["id"].startswith("msg_")
    assert data["status"] == "queued"  # the answer is the accepted state
    assert data["channel"] == "sms"
    assert data["to"] == USER
    assert data["from"] == BUSINESS
    assert data["direction"] == "outbound"
    assert data["body"] == "Hello"
    assert data["created_at"].endswith("Z")
    assert data["provider"] == "sandbox"
    # Then the sandbox walked it to delivered.
    assert load(tenant, data["id"]).status == "delivered"


def test_national_numbers_use_the_organization_country(tenant, send):
    response = send({"channel": "sms", "to": "(415) 555-0123", "body": "x"})
    assert response.json()["data"]["to"] == "+14155550123"
    tenant.org.default_country = "GB"
    tenant.org.save()
    response = send({"channel": "sms", "to": "07911 123456", "body": "x"})
    assert response.status_code == 202, response.content
    assert response.json()["data"]["to"] == "+447911123456"
    # Twilio-style channel addressing is accepted.
    response = send({"channel": "whatsapp", "to": "whatsapp:+14155550123", "body": "x"})
    assert response.json()["data"]["to"] == USER


@pytest.mark.parametrize(("path", "body", "channel"), [
    ("/api/v1/messages/sms", {"to": USER, "body": "x"}, "sms"),
    ("/api/v1/messages/whatsapp", {"to": USER, "body": "x"}, "whatsapp"),
    ("/api/v1/messages/rcs", {"to": USER, "body": "x", "from": "acme_agent"}, "rcs"),
    ("/api/v1/messages/sms", {"to": USER, "media_url": "https://cdn.example.com/a.png"}, "mms"),
])
def test_channel_specific_routes(send, path, body, channel):
    response = send(body, path=path)
    assert response.status_code == 202, response.content
    assert response.json()["data"]["channel"] == channel


def test_channel_route_refuses_another_channel(send):
    error(send({"channel": "sms", "to": USER, "body": "x"}, path="/api/v1/messages/whatsapp"),
          422, "VALIDATION_ERROR")


@pytest.mark.parametrize("channel", ["sms", "mms", "whatsapp", "rcs", "voice"])
def test_every_phone_channel_is_accepted(tenant, send, channel):
    body = {"channel": channel, "to": USER, "body": "Your code is 1234"}
    if channel == "mms":
        body["media_url"] = ["https://cdn.example.com/a.png", "https://cdn.example.com/b.png"]
    response = send(body)
    assert response.status_code == 202, response.content
    assert load(tenant, response.json()["data"]["id"]).status == "delivered"


def test_email_send(tenant, send):
    response = send({"channel": "email", "to": "Ana@Example.COM", "subject": "Hi",
                     "body": "<p>Hello</p>"})
    assert response.status_code == 202, response.content
    data = response.json()["data"]
    assert data["to"] == "ana@example.com"
    assert data["subject"] == "Hi"
    assert data["from"] == "sandbox@sandbox.test"


def test_media_url_string_or_list_and_sms_with_media_is_mms(send):
    one = send({"channel": "mms", "to": USER, "media_url": "https://cdn.example.com/a.png"})
    assert one.json()["data"]["media_urls"] == ["https://cdn.example.com/a.png"]
    many = send({"channel": "sms", "to": USER, "body": "look",
                 "media_url": ["https://cdn.example.com/a.png", "http://cdn.example.com/b"]})
    assert many.status_code == 202
    assert many.json()["data"]["channel"] == "mms"
    assert len(many.json()["data"]["media_urls"]) == 2
    error(send({"channel": "mms", "to": USER, "media_url": "ftp://x/y"}), 422,
          "VALIDATION_ERROR")
    error(send({"channel": "mms", "to": USER, "media_url": ["https://a.example/x"] * 11}), 422,
          "VALIDATION_ERROR")
    error(send({"channel": "voice", "to": USER, "body": "x",
                "media_url": "https://a.example/x"}), 422, "VALIDATION_ERROR")


def test_media_url_may_name_an_uploaded_file(tenant, send, settings, tmp_path):
    settings.MEDIA_ROOT = str(tmp_path)
    from django.core.files.uploadedfile import SimpleUploadedFile

    upload = tenant.client().post(
        "/api/v1/files/upload",
        {"file": SimpleUploadedFile("a.png", b"\x89PNG....", content_type="image/png"),
         "purpose": "mms_attachment"}, format="multipart")
    assert upload.status_code == 201, upload.content
    file_id = upload.json()["data"]["id"]
    response = send({"channel": "mms", "to": USER, "media_url": file_id})
    assert response.status_code == 202, response.content
    url = response.json()["data"]["media_urls"][0]
    assert f"/api/v1/files/{file_id}/content?" in url
    assert "signature=" in url
    error(send({"channel": "mms", "to": USER, "media_url": "fil_UNKNOWN"}), 422,
          "VALIDATION_ERROR")


# --- Pre-send validation codes ------------------------------------------------------------


def test_missing_content_names_the_three_fields(send):
    err = error(send({"channel": "sms", "to": USER}), 422, "MISSING_REQUIRED_FIELD")
    assert err["details"]["fields"] == ["body", "template_name", "media_url"]
    assert {i["field"] for i in err["details"]["issues"]} == {"body", "template_name",
                                                              "media_url"}


@pytest.mark.parametrize(("body", "field"), [
    ({"to": USER, "body": "x"}, "channel"),
    ({"channel": "sms", "body": "x"}, "to"),
    ({"channel": "sms", "to": "", "body": "x"}, "to"),
    ({"channel": "email", "to": "a@example.com", "body": "x"}, "subject"),
])
def test_missing_required_field_names_it(send, body, field):
    err = error(send(body), 422, "MISSING_REQUIRED_FIELD")
    assert err["details"]["field"] == field
    assert err["details"]["issues"][0]["field"] == field


@pytest.mark.parametrize("to", ["12", "+1415555", "not a number", "+999123456789",
                                "+15555550100"])
def test_invalid_phone_number(send, to):
    err = error(send({"channel": "sms", "to": to, "body": "x"}), 422, "INVALID_PHONE_NUMBER")
    assert err["details"]["field"] == "to"
    assert err["details"]["issues"][0]["field"] == "to"


@pytest.mark.parametrize("to", ["nobody", "a@", "a@b", "@example.com"])
def test_invalid_email(send, to):
    err = error(send({"channel": "email", "to": to, "subject": "s", "body": "x"}), 422,
                "INVALID_EMAIL")
    assert err["details"]["field"] == "to"


@pytest.mark.parametrize(("channel", "sender"), [
    ("sms", "12"), ("sms", "ACME-TOO-LONG-ID"), ("whatsapp", "ACME"), ("voice", "+1415"),
    ("email", "not-an-email"), ("rcs", "bad agent id!"), ("mms", "ACME"),
])
def test_invalid_from_number(send, channel, sender):
    body = {"channel": channel, "to": "a@example.com" if channel == "email" else USER,
            "body": "x", "from": sender}
    if channel == "email":
        body["subject"] = "s"
    if channel == "mms":
        body["media_url"] = "https://a.example/x.png"
    err = error(send(body), 422, "INVALID_FROM_NUMBER")
    assert err["details"]["field"] == "from"


@pytest.mark.parametrize(("channel", "sender", "stored"), [
    ("sms", "ACME", "ACME"), ("sms", "12345", "12345"), ("sms", "(415) 555-0100", BUSINESS),
    ("rcs", "acme-agent@rbm.goog", "acme-agent@rbm.goog"),
    ("email", "Shop <Shop@Example.com>", "shop@example.com"),
])
def test_valid_senders(send, channel, sender, stored):
    body = {"channel": channel, "to": "a@example.com" if channel == "email" else USER,
            "body": "x", "from": sender}
    if channel == "email":
        body["subject"] = "s"
    response = send(body)
    assert response.status_code == 202, response.content
    assert response.json()["data"]["from"] == stored


def test_mms_to_a_non_nanp_number(send):
    err = error(send({"channel": "mms", "to": "+447911123456",
                      "media_url": "https://a.example/x.png"}), 422, "MMS_NANP_ONLY")
    assert err["details"]["field"] == "to"
    # SMS with media is MMS, so the same rule applies; plain SMS abroad is fine.
    error(send({"channel": "sms", "to": "+447911123456", "body": "x",
                "media_url": "https://a.example/x.png"}), 422, "MMS_NANP_ONLY")
    assert send({"channel": "sms", "to": "+447911123456", "body": "x"}).status_code == 202
    assert send({"channel": "mms", "to": "+16135550123",  # Canada is NANP
                 "media_url": "https://a.example/x.png"}).status_code == 202


def test_invalid_template_shape(send):
    err = error(send({"channel": "whatsapp", "to": USER, "template_name": "bad name!"}), 422,
                "INVALID_TEMPLATE")
    assert err["details"]["field"] == "template_name"
    error(send({"channel": "whatsapp", "to": USER, "template_name": "order_update",
                "variables": ["Ana"]}), 422, "VALIDATION_ERROR")
    error(send({"channel": "whatsapp", "to": USER, "template_name": "order_update",
                "language": "english please"}), 422, "VALIDATION_ERROR")


def test_unknown_template_is_invalid_template(send):
    err = error(send({"channel": "sms", "to": USER, "template_name": "no_such_template",
                      "language": "en"}), 422, "INVALID_TEMPLATE")
    assert err["details"]["field"] == "template_name"


def test_template_send_renders_the_approved_template(tenant, send):
    created = tenant.client().post(
        "/api/v1/messages/templates",
        {"name": "order_ready", "channel": "sms", "category": "utility", "language": "en",
         "content": "Hi {{1}}, order {{2}} is ready."}, format="json")
    assert created.status_code == 201, created.content
    response = send({"channel": "sms", "to": USER, "template_name": "order_ready",
                     "language": "en", "variables": {"1": "Ana", "2": "A-17"}})
    assert response.status_code == 202, response.content
    data = response.json()["data"]
    assert data["body"] == "Hi Ana, order A-17 is ready."
    assert data["template_name"] == "order_ready"
    err = error(send({"channel": "sms", "to": USER, "template_name": "order_ready",
                      "language": "en", "variables": {"1": "Ana"}}), 422, "INVALID_TEMPLATE")
    assert err["details"]["field"] == "variables"


@pytest.mark.parametrize(("body", "field"), [
    ({"channel": "fax", "to": USER, "body": "x"}, "channel"),
    ({"channel": "sms", "to": USER, "body": "x" * 1601}, "body"),
    ({"channel": "rcs", "to": USER, "body": "x" * 2001}, "body"),
    ({"channel": "sms", "to": USER, "body": "x", "subject": "s"}, "subject"),
    ({"channel": "sms", "to": USER, "body": "x", "messaging_service_id": "mgs_nope"},
     "messaging_service_id"),
    ({"channel": "sms", "to": USER, "body": "x", "status_callback": "ftp://x.example/cb"},
     "status_callback"),
    ({"channel": "sms", "to": USER, "body": "x", "webhook_url": "http://169.254.169.254/"},
     "status_callback"),
    ({"channel": "sms", "to": USER, "body": "x", "status_callback": "http://localhost/cb"},
     "status_callback"),
    ({"channel": "rcs", "to": USER, "body": "x", "fallback": ["fax"]}, "fallback"),
    ({"channel": "rcs", "to": USER, "body": "x", "fallback": ["rcs"]}, "fallback"),
    ({"channel": "rcs", "to": USER, "body": "x", "fallback": ["sms", "sms"]}, "fallback"),
    ({"channel": "rcs", "to": USER, "body": "x", "fallback": ["email"]}, "fallback"),
    ({"channel": "rcs", "to": USER, "body": "x", "fallback": ["sms"],
      "fallback_after_seconds": 0}, "fallback_after_seconds"),
])
def test_validation_errors_name_the_field(send, body, field):
    err = error(send(body), 422, "VALIDATION_ERROR")
    assert err["details"]["issues"][0]["field"] == field


def test_nothing_is_stored_when_validation_fails(tenant, send):
    send({"channel": "sms", "to": "12", "body": "x"})
    send({"channel": "sms", "to": USER})
    assert messages(tenant) == []


def test_live_organization_without_provider_is_503_and_stores_nothing(db, commit):
    live = make_tenant(sandbox=False)
    with commit():
        response = live.client().post(URL, {"channel": "sms", "to": USER, "body": "x"},
                                      format="json")
    err = error(response, 503, "PROVIDER_NOT_WIRED")
    assert err["details"]["channel"] == "sms"
    with commit():
        email = live.client().post(URL, {"channel": "email", "to": "a@example.com",
                                         "subject": "s", "body": "x"}, format="json")
    error(email, 503, "PROVIDER_NOT_WIRED")
    with tenant_context(live.org):
        assert Message.objects.count() == 0


def test_fallback_channel_without_provider_is_503_in_live_mode(db, commit):
    from messaging.providers.models import ProviderAccount

    live = make_tenant(sandbox=False)
    account = ProviderAccount(organization=live.org, channel="rcs", provider="rcs_business",
                              config={"agent_id": "acme@rbm.goog"})
    account.credentials = {"access_token": "x"}
    account.save()
    with commit():
        response = live.client().post(URL, {"channel": "rcs", "to": USER, "body": "x",
                                            "fallback": ["whatsapp"]}, format="json")
    err = error(response, 503, "PROVIDER_NOT_WIRED")
    assert err["details"]["channel"] == "whatsapp"


def test_scopes(tenant, send):
    reader = tenant.client(make_key(tenant, ["messages:read"]))
    error(send({"channel": "sms", "to": USER, "body": "x"}, client=reader), 403,
          "INSUFFICIENT_PERMISSIONS")
    assert reader.get(URL).status_code == 200
    writer = tenant.client(make_key(tenant, ["messages:write"]))
    assert send({"channel": "sms", "to": USER, "body": "x"}, client=writer).status_code == 202
    other = tenant.client(make_key(tenant, ["contacts:read"]))
    error(other.get(URL), 403, "INSUFFICIENT_PERMISSIONS")


def test_idempotency_key(tenant, send):
    headers = {"HTTP_IDEMPOTENCY_KEY": "order-17-sms"}
    body = {"channel": "sms", "to": USER, "body": "Your order shipped"}
    first = send(body, headers=headers)
    again = send(body, headers=headers)
    assert first.status_code == again.status_code == 202
    assert first.json()["data"]["id"] == again.json()["data"]["id"]
    assert len(messages(tenant)) == 1
    error(send({**body, "body": "different"}, headers=headers), 409, "IDEMPOTENCY_CONFLICT")


def test_contact_is_linked_by_recipient(tenant, send):
    contact = tenant.client().post("/api/v1/contacts", {"phone": USER, "first_name": "Ana"},
                                   format="json").json()["data"]
    response = send({"channel": "sms", "to": USER, "body": "x"})
    assert response.json()["data"]["contact_id"] == contact["id"]


def test_email_contact_is_linked_and_an_unknown_recipient_has_none(tenant, send):
    contact = tenant.client().post("/api/v1/contacts", {"email": "ana@example.com"},
                                   format="json").json()["data"]
    linked = send({"channel": "email", "to": "ana@example.com", "from": "shop@example.com",
                   "subject": "Hi", "body": "x"})
    assert linked.status_code == 202, linked.content
    assert linked.json()["data"]["contact_id"] == contact["id"]
    # The phone of nobody: no contact, and not the email contact by accident.
    unknown = send({"channel": "sms", "to": USER, "body": "x"})
    assert unknown.json()["data"]["contact_id"] is None
    with tenant_context(tenant.org):
        assert Message.objects.get(pk=linked.json()["data"]["id"]).contact_id == contact["id"]


def test_an_opted_out_send_stores_nothing(tenant, send):
    from messaging.models import OptOut

    with tenant_context(tenant.org):
        OptOut.objects.create(organization=tenant.org, sender=OptOut.ALL_SENDERS,
                              recipient=USER, channel="sms", keyword="STOPALL")
    before = len(messages(tenant))
    refused = error(send({"channel": "sms", "to": USER, "from": BUSINESS, "body": "Sale"}),
                    422, "RECIPIENT_OPTED_OUT")
    assert refused["details"]["sender"] == "*"
    assert len(messages(tenant)) == before
    # With links to shorten the refusal also rolls back the short links made for it.
    refused = send({"channel": "sms", "to": USER, "from": BUSINESS, "shorten_links": True,
                    "body": "See https://example.com/sale"})
    error(refused, 422, "RECIPIENT_OPTED_OUT")
    assert len(messages(tenant)) == before
    from messaging.links.models import ShortLink

    with tenant_context(tenant.org):
        assert not ShortLink.objects.exists()
