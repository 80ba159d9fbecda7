"""Messaging services: CRUD, the sender pool with sticky sender per recipient, defaults the
service gives its messages (Document 2, 4.4)."""

from __future__ import annotations

import pytest

from messaging.models import StickySender
from platform_core.audit.models import AuditLogEntry
from platform_core.tenancy.context import tenant_context

from .conftest import BUSINESS, BUSINESS_2, USER, load

pytestmark = pytest.mark.django_db

URL = "/api/v1/messaging-services"
POOL = ["+14155550100", "+14155550101", "+14155550102", "+14155550103"]


def create(tenant, **body):
    body = {"name": "Marketing", "senders": [{"channel": "sms", "from": n} for n in POOL],
            **body}
    response = tenant.client().post(URL, body, format="json")
    assert response.status_code == 201, response.content
    return response.json()["data"]


def test_crud(tenant):
    service = create(tenant, inbound_webhook_url="https://hooks.example.com/in",
                     status_callback="https://hooks.example.com/status", shorten_links=True)
    assert service["id"].startswith("mgs_")
    assert service["sticky_sender"] is True
    assert service["opt_out_handling"] is True
    assert service["senders"][0] == {"channel": "sms", "from": POOL[0]}
    client = tenant.client()
    assert client.get(f"{URL}/{service['id']}").json()["data"]["name"] == "Marketing"
    assert [s["id"] for s in client.get(URL).json()["data"]] == [service["id"]]
    patched = client.patch(f"{URL}/{service['id']}", {"name": "Alerts", "sticky_sender": False},
                           format="json")
    assert patched.status_code == 200, patched.content
    assert patched.json()["data"]["name"] == "Alerts"
    assert patched.json()["data"]["sticky_sender"] is False
    assert patched.json()["data"]["senders"] == service["senders"]
    assert client.delete(f"{URL}/{service['id']}").status_code == 204
    assert client.get(f"{URL}/{service['id']}").status_code == 404
    with tenant_context(tenant.org):
        actions = list(AuditLogEntry.objects.filter(target_id=service["id"])
                       .values_list("action", flat=True))
    assert sorted(actions) == ["messaging_service.created", "messaging_service.deleted",
                               "messaging_service.updated"]


@pytest.mark.parametrize(("body", "field"), [
    ({"name": ""}, "name"),
    ({"name": "x", "senders": [{"channel": "sms"}]}, "senders"),
    ({"name": "x", "senders": [{"channel": "fax", "from": BUSINESS}]}, "senders"),
    ({"name": "x", "senders": "nope"}, "senders"),
    ({"name": "x", "inbound_webhook_url": "ftp://x"}, "inbound_webhook_url"),
])
def test_validation(tenant, body, field):
    response = tenant.client().post(URL, body, format="json")
    assert response.status_code == 422, response.content
    assert response.json()["error"]["details"]["issues"][0]["field"].startswith(field)


def test_invalid_sender_number(tenant):
    response = tenant.client().post(URL, {"name": "x", "senders": [
        {"channel": "whatsapp", "from": "ACME"}]}, format="json")
    assert response.status_code == 422
    assert response.json()["error"]["code"] == "INVALID_FROM_NUMBER"
    assert response.json()["error"]["details"]["field"] == "senders"


def test_sticky_sender_per_recipient(tenant, send):
    service = create(tenant)
    recipients = [f"+1415555{n:04d}" for n in range(120, 140)]
    first = {}
    for to in recipients:
        data = send({"channel": "sms", "to": to, "body": "x",
                     "messaging_service_id": service["id"]}).json()["data"]
        assert data["from"] in POOL
        assert data["messaging_service_id"] == service["id"]
        first[to] = data["from"]
    assert len(set(first.values())) > 1  # the pool is used, not one number
    for to in recipients:
        again = send({"channel": "sms", "to": to, "body": "y",
                      "messaging_service_id": service["id"]}).json()["data"]
        assert again["from"] == first[to]
    # MMS shares the SMS pool and the same stickiness.
    mms = send({"channel": "mms", "to": recipients[0], "media_url": "https://a.example/x.png",
                "messaging_service_id": service["id"]}).json()["data"]
    assert mms["from"] == first[recipients[0]]


def test_sticky_sender_survives_pool_changes_and_moves_when_removed(tenant, send):
    service = create(tenant)
    to = USER
    sender = send({"channel": "sms", "to": to, "body": "x",
                   "messaging_service_id": service["id"]}).json()["data"]["from"]
    # Adding numbers keeps the recipient on its sender.
    bigger = [*POOL, "+14155550104", "+14155550105"]
    tenant.client().patch(f"{URL}/{service['id']}", {"senders": [
        {"channel": "sms", "from": n} for n in bigger]}, format="json")
    assert send({"channel": "sms", "to": to, "body": "x", "messaging_service_id":
                 service["id"]}).json()["data"]["from"] == sender
    # Removing its sender re-picks one from the pool, sticky again.
    rest = [n for n in bigger if n != sender]
    tenant.client().patch(f"{URL}/{service['id']}", {"senders": [
        {"channel": "sms", "from": n} for n in rest]}, format="json")
    moved = send({"channel": "sms", "to": to, "body": "x",
                  "messaging_service_id": service["id"]}).json()["data"]["from"]
    assert moved in rest
    assert send({"channel": "sms", "to": to, "body": "x", "messaging_service_id":
                 service["id"]}).json()["data"]["from"] == moved
    with tenant_context(tenant.org):
        assert StickySender.objects.filter(recipient=to).count() == 1


def test_non_sticky_pool(tenant, send):
    service = create(tenant, sticky_sender=False)
    senders = {send({"channel": "sms", "to": USER, "body": "x",
                     "messaging_service_id": service["id"]}).json()["data"]["from"]
               for _ in range(30)}
    assert len(senders) > 1
    with tenant_context(tenant.org):
        assert not StickySender.objects.exists()


def test_service_without_a_sender_for_the_channel(tenant, send):
    service = create(tenant)
    response = send({"channel": "whatsapp", "to": USER, "body": "x",
                     "messaging_service_id": service["id"]})
    assert response.status_code == 422
    assert response.json()["error"]["details"]["issues"][0]["field"] == "messaging_service_id"
    # An explicit from wins over the pool.
    response = send({"channel": "whatsapp", "to": USER, "body": "x", "from": BUSINESS,
                     "messaging_service_id": service["id"]})
    assert response.status_code == 202
    assert response.json()["data"]["from"] == BUSINESS


def test_service_defaults_reach_its_messages(tenant, send, receiver):
    service = create(tenant, status_callback=receiver.url + "?svc=1", shorten_links=True)
    data = send({"channel": "sms", "to": USER, "body": "See https://shop.example.com/o/17",
                 "messaging_service_id": service["id"]}).json()["data"]
    assert data["status_callback"] == receiver.url + "?svc=1"
    assert data["shorten_links"] is True
    assert "/l/" in data["body"]
    got = [r.json["type"] for r in receiver.requests if r.path.endswith("?svc=1")]
    assert got == ["message.queued", "message.sent", "message.delivered"]
    assert load(tenant, data["id"]).messaging_service_id == service["id"]


def test_deleting_a_service_keeps_its_messages(tenant, send):
    service = create(tenant)
    message_id = send({"channel": "sms", "to": USER, "body": "x",
                       "messaging_service_id": service["id"]}).json()["data"]["id"]
    tenant.client().delete(f"{URL}/{service['id']}")
    assert load(tenant, message_id).messaging_service_id is None
    assert BUSINESS_2 in POOL
