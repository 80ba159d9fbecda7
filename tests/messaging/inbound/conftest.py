"""Fixtures of the inbound webhook tests: provider accounts, real provider signatures,
outbound messages awaiting receipts, a loopback webhook receiver."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from urllib.parse import urlencode

import pytest
from django.conf import settings
from twilio.request_validator import RequestValidator

from messaging.models import Message
from messaging.providers.models import ProviderAccount
from platform_core.events.models import Event
from platform_core.net import http
from tests.platform_core.webhooks.receivers import start_receiver

TWILIO_TOKEN = "twilio-auth-token-0123456789abcdef"
META_APP_SECRET = "meta-app-secret-fedcba9876543210"
META_VERIFY_TOKEN = "meta-verify-token"
RBM_CLIENT_TOKEN = "rbm-client-token-SJENCPGJESMGUFPY"
BUSINESS_NUMBER = "+14155550100"
USER_NUMBER = "+14155550123"


def twilio_path(tenant) -> str:
    return f"/api/v1/inbound/twilio/{tenant.org.slug}"


def whatsapp_path(tenant) -> str:
    return f"/api/v1/inbound/whatsapp/{tenant.org.slug}"


def rcs_path(tenant) -> str:
    return f"/api/v1/inbound/rcs/{tenant.org.slug}"


def add_account(tenant, *, channel: str, provider: str, credentials: dict,
                config: dict | None = None) -> ProviderAccount:
    account = ProviderAccount(organization=tenant.org, channel=channel, provider=provider,
                              config=config or {})
    account.credentials = credentials
    account.save()
    return account


@pytest.fixture
def twilio_account(tenant):
    return add_account(tenant, channel="sms", provider="twilio",
                       credentials={"auth_token": TWILIO_TOKEN},
                       config={"account_sid": "AC" + "0" * 32})


@pytest.fixture
def whatsapp_account(tenant):
    return add_account(tenant, channel="whatsapp", provider="whatsapp_cloud",
                       credentials={"access_token": "EAAG", "app_secret": META_APP_SECRET,
                                    "verify_token": META_VERIFY_TOKEN},
                       config={"phone_number_id": "106540352242922"})


@pytest.fixture
def rcs_account(tenant):
    return add_account(tenant, channel="rcs", provider="rcs_business",
                       credentials={"access_token": "ya29", "client_token": RBM_CLIENT_TOKEN},
                       config={"agent_id": "acme-agent@rbm.goog"})


def post_twilio(client, tenant, params: dict, *, token: str = TWILIO_TOKEN,
                url: str | None = None, signature: str | None = None, path: str | None = None,
                **headers):
    """POST a form body signed the way Twilio signs it (its own RequestValidator)."""
    path = path or twilio_path(tenant)
    signed_url = url or f"{settings.PUBLIC_BASE_URL}{path}"
    if signature is None:
        signature = RequestValidator(token).compute_signature(signed_url, params)
    return client.post(path, data=urlencode(params),
                       content_type="application/x-www-form-urlencoded",
                       HTTP_X_TWILIO_SIGNATURE=signature, **headers)


def meta_signature(raw: bytes, secret: str = META_APP_SECRET) -> str:
    return "sha256=" + hmac.new(secret.encode(), raw, hashlib.sha256).hexdigest()


def post_whatsapp(client, tenant, payload: dict, *, secret: str = META_APP_SECRET,
                  signature: str | None = None):
    raw = json.dumps(payload).encode()
    return client.post(whatsapp_path(tenant), data=raw, content_type="application/json",
                       HTTP_X_HUB_SIGNATURE_256=signature if signature is not None
                       else meta_signature(raw, secret))


def whatsapp_payload(*, messages=(), statuses=(), display="14155550100") -> dict:
    value = {"messaging_product": "whatsapp",
             "metadata": {"display_phone_number": display, "phone_number_id": "106540352242922"}}
    if messages:
        value["contacts"] = [{"profile": {"name": "Kerry"}, "wa_id": "14155550123"}]
        value["messages"] = list(messages)
    if statuses:
        value["statuses"] = list(statuses)
    return {"object": "whatsapp_business_account",
            "entry": [{"id": "102290129340398", "changes": [{"value": value,
                                                              "field": "messages"}]}]}


def wa_text(text: str, *, wamid: str = "wamid.IN1", ts: int | None = None,
            sender: str = "14155550123") -> dict:
    message = {"from": sender, "id": wamid, "type": "text", "text": {"body": text}}
    if ts is not False:
        message["timestamp"] = str(ts if ts is not None else int(time.time()))
    return message


def wa_status(wamid: str, status: str, *, ts: int | None = None, errors=None) -> dict:
    report = {"id": wamid, "status": status, "timestamp": str(ts or int(time.time())),
              "recipient_id": "14155550123"}
    if errors:
        report["errors"] = errors
    return report


def rbm_body(event: dict) -> tuple[bytes, str]:
    """A Pub/Sub push body carrying `event` and Google's X-Goog-Signature for it."""
    data = json.dumps(event).encode()
    body = json.dumps({"message": {"data": base64.b64encode(data).decode(),
                                   "messageId": "2070443601311540", "publishTime":
                                   "2030-01-01T00:00:00.000Z"},
                       "subscription": "projects/rbm-acme/subscriptions/rbm-agent-sub"})
    signature = base64.b64encode(
        hmac.new(RBM_CLIENT_TOKEN.encode(), data, hashlib.sha512).digest()).decode()
    return body.encode(), signature


def post_rcs(client, tenant, event: dict, *, signature: str | None = None):
    body, good = rbm_body(event)
    return client.post(rcs_path(tenant), data=body, content_type="application/json",
                       HTTP_X_GOOG_SIGNATURE=good if signature is None else signature)


def rfc3339_now(offset: float = 0) -> str:
    from datetime import UTC, datetime

    moment = datetime.fromtimestamp(time.time() + offset, UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond:06d}123Z"


def outbound(tenant, *, provider: str, provider_message_id: str, status: str = "queued",
             channel: str = "sms", to: str = USER_NUMBER) -> Message:
    return Message.objects.for_organization(tenant.org).create(
        organization=tenant.org, channel=channel, direction="outbound", to=to,
        from_address=BUSINESS_NUMBER, body="Your order shipped", status=status,
        provider=provider, provider_message_id=provider_message_id,
    )


def reload(message: Message) -> Message:
    return Message.objects.for_organization(message.organization).get(pk=message.pk)


def events(tenant, type_: str | None = None) -> list[Event]:
    rows = Event.objects.for_organization(tenant.org).order_by("created_at", "id")
    return list(rows.filter(type=type_) if type_ else rows)


def inbound_messages(tenant) -> list[Message]:
    return list(Message.objects.for_organization(tenant.org).filter(direction="inbound")
                .order_by("created_at", "id"))


@pytest.fixture
def receiver(settings):
    settings.ALLOW_PRIVATE_WEBHOOK_TARGETS = True
    settings.WEBHOOK_TIMEOUT_SECONDS = 2.0
    r = start_receiver()
    yield r
    r.close()
    http.close_connections()


@pytest.fixture
def subscribe(tenant):
    def make(url: str, events=("message.received",)):
        response = tenant.client().post("/api/v1/webhooks", {"url": url, "events": list(events)},
                                        format="json")
        assert response.status_code == 201, response.content
        return response.json()["data"]

    return make


@pytest.fixture
def on_commit(django_capture_on_commit_callbacks):
    """Run the after-commit fan-out (events to webhooks) of the requests made inside."""
    return lambda: django_capture_on_commit_callbacks(execute=True)
