"""Fixtures of the WhatsApp channel tests: a test-mode organization connected through the
sandbox double, inbound injection, signed Meta webhooks, clients with a role."""

from __future__ import annotations

import hashlib
import hmac
import json
import time

import pytest

from messaging.models import Message
from platform_core.events.models import Event
from platform_core.tenancy.context import tenant_context
from tests.contacts.helpers import client_with_role  # noqa: F401  (re-exported)

USER = "+14155550123"
USER_2 = "+14155550124"
APP_SECRET = "meta-app-secret-for-whatsapp-tests"
WABA = "102290129340398"
BUSINESS = "987654321098765"


def code(response) -> str:
    return response.json()["error"]["code"]


def data(response):
    return response.json()["data"]


def connect(tenant, *, client=None, waba: str = WABA, **extra):
    response = (client or tenant.client()).post(
        "/api/v1/whatsapp/connect",
        {"code": "signup-code-123", "waba_id": waba, "business_id": BUSINESS, **extra},
        format="json")
    assert response.status_code == 201, response.content
    return data(response)


@pytest.fixture
def wa(tenant):
    """The tenant, connected (two sandbox numbers); `wa.numbers` their phone number ids."""
    rows = connect(tenant)
    tenant.numbers = [row["phone_number_id"] for row in rows]
    tenant.default = next(r["phone_number_id"] for r in rows if r["is_default"])
    return tenant


def inbound(tenant, sender: str = USER, body: str = "hi"):
    """The user writes to us (opens the 24-hour window)."""
    response = tenant.client().post("/api/v1/sandbox/inbound", {
        "channel": "whatsapp", "from": sender, "to": "+15005550006", "body": body},
        format="json")
    return response


def with_app_secret(tenant) -> None:
    from messaging.providers.models import ProviderAccount

    with tenant_context(tenant.org):
        account = ProviderAccount.objects.for_organization(tenant.org).get(channel="whatsapp")
        credentials = account.credentials
        credentials["app_secret"] = APP_SECRET
        account.credentials = credentials
        account.save()


def post_webhook(client, tenant, field: str, value: dict):
    payload = {"object": "whatsapp_business_account",
               "entry": [{"id": WABA, "changes": [{"field": field, "value": value}]}]}
    raw = json.dumps(payload).encode()
    signature = "sha256=" + hmac.new(APP_SECRET.encode(), raw, hashlib.sha256).hexdigest()
    return client.post(f"/api/v1/inbound/whatsapp/{tenant.org.slug}", data=raw,
                       content_type="application/json", HTTP_X_HUB_SIGNATURE_256=signature)


def wa_message(message: dict, *, phone_number_id: str = "1") -> dict:
    message.setdefault("timestamp", str(int(time.time())))
    message.setdefault("from", USER.lstrip("+"))
    return {"messaging_product": "whatsapp",
            "metadata": {"display_phone_number": "15005550006",
                         "phone_number_id": phone_number_id},
            "contacts": [{"profile": {"name": "Kerry"}, "wa_id": USER.lstrip("+")}],
            "messages": [message]}


def messages(tenant, **filters) -> list[Message]:
    with tenant_context(tenant.org):
        return list(Message.objects.for_organization(tenant.org).filter(**filters)
                    .order_by("created_at", "id"))


def events(tenant, prefix: str = "") -> list[Event]:
    rows = Event.objects.for_organization(tenant.org).order_by("created_at", "id")
    return [e for e in rows if e.type.startswith(prefix)]
