"""Conversations, minimal (0-conventions.md 7; Document 2, 2.5): one open thread per contact
and channel, `POST /api/v1/conversations` 201 new / 200 existing, list and detail."""

from __future__ import annotations

import threading

import pytest
from django.db import connection, transaction

from conversations.models import Conversation
from conversations.services import conversation_for_inbound
from platform_core.events.models import Event
from platform_core.tenancy.context import tenant_context

pytestmark = pytest.mark.django_db

CONVERSATIONS = "/api/v1/conversations"


def make_contact(tenant, phone="+14155550123") -> str:
    response = tenant.client().post("/api/v1/contacts", {"phone": phone}, format="json")
    assert response.status_code == 201, response.content
    return response.json()["data"]["id"]


def created_events(tenant) -> list[Event]:
    return list(Event.objects.for_organization(tenant.org).filter(type="conversation.created")
                .order_by("created_at"))


def test_create_then_existing_answers_200(tenant):
    contact = make_contact(tenant)
    client = tenant.client()
    first = client.post(CONVERSATIONS, {"contact_id": contact, "channel": "sms"}, format="json")
    assert first.status_code == 201, first.content
    data = first.json()["data"]
    assert data["id"].startswith("cnv_")
    assert {"id", "contact_id", "channel", "status", "last_message_at", "created_at",
            "updated_at", "priority", "tags", "assignee_id", "unread", "sentiment", "ai_led",
            "contact", "last_message", "queue"} <= set(data)
    assert (data["contact_id"], data["channel"], data["status"]) == (contact, "sms", "open")
    again = client.post(CONVERSATIONS, {"contact_id": contact, "channel": "sms"}, format="json")
    assert again.status_code == 200
    assert again.json()["data"]["id"] == data["id"]
    # Another channel is another thread.
    other = client.post(CONVERSATIONS, {"contact_id": contact, "channel": "whatsapp"},
                        format="json")
    assert other.status_code == 201
    assert other.json()["data"]["id"] != data["id"]
    events = created_events(tenant)
    assert [e.data["id"] for e in events] == [data["id"], other.json()["data"]["id"]]
    assert events[0].data["contact_id"] == contact


def test_create_validation(tenant, other_tenant):
    client = tenant.client()
    response = client.post(CONVERSATIONS, {"contact_id": "cnt_nope", "channel": "sms"},
                           format="json")
    assert response.status_code == 422
    assert response.json()["error"]["details"]["issues"][0]["field"] == "contact_id"
    foreign = make_contact(other_tenant)
    response = client.post(CONVERSATIONS, {"contact_id": foreign, "channel": "sms"},
                           format="json")
    assert response.status_code == 422
    contact = make_contact(tenant)
    response = client.post(CONVERSATIONS, {"contact_id": contact, "channel": "fax"},
                           format="json")
    assert response.status_code == 422
    assert response.json()["error"]["details"]["issues"][0]["field"] == "channel"


def test_inbound_creates_then_continues_and_reopens_after_close(tenant):
    with tenant_context(tenant.org):
        first = conversation_for_inbound(organization=tenant.org, contact_id="cnt_a",
                                         channel="sms")
        second = conversation_for_inbound(organization=tenant.org, contact_id="cnt_a",
                                          channel="sms")
        assert second.pk == first.pk
        assert second.last_message_at >= first.last_message_at
        Conversation.objects.filter(pk=first.pk).update(status="closed")
        third = conversation_for_inbound(organization=tenant.org, contact_id="cnt_a",
                                         channel="sms")
    assert third.pk != first.pk
    assert third.status == "open"
    assert [e.data["id"] for e in created_events(tenant)] == [first.pk, third.pk]


def test_list_detail_filters_and_query_count(tenant, django_assert_max_num_queries):
    client = tenant.client()
    with tenant_context(tenant.org):
        a = conversation_for_inbound(organization=tenant.org, contact_id="cnt_a", channel="sms")
        b = conversation_for_inbound(organization=tenant.org, contact_id="cnt_b",
                                     channel="whatsapp")
        c = conversation_for_inbound(organization=tenant.org, contact_id="cnt_a", channel="rcs")
        Conversation.objects.filter(pk=c.pk).update(status="closed")
    with django_assert_max_num_queries(6):
        response = client.get(CONVERSATIONS)
    assert response.status_code == 200
    assert [r["id"] for r in response.json()["data"]] == [c.pk, b.pk, a.pk]
    assert [r["id"] for r in client.get(CONVERSATIONS, {"status": "open"}).json()["data"]] == \
        [b.pk, a.pk]
    assert [r["id"] for r in client.get(CONVERSATIONS, {"channel": "sms"}).json()["data"]] == \
        [a.pk]
    assert [r["id"] for r in client.get(CONVERSATIONS, {"contact_id": "cnt_a"})
            .json()["data"]] == [c.pk, a.pk]
    assert client.get(CONVERSATIONS, {"status": "pending"}).status_code == 400
    page = client.get(CONVERSATIONS, {"limit": 2}).json()
    assert page["meta"]["pagination"]["has_more"] is True
    rest = client.get(CONVERSATIONS, {"limit": 2,
                                      "cursor": page["meta"]["pagination"]["cursor"]})
    assert [r["id"] for r in rest.json()["data"]] == [a.pk]
    detail = client.get(f"{CONVERSATIONS}/{a.pk}")
    assert detail.status_code == 200
    assert detail.json()["data"]["contact_id"] == "cnt_a"
    assert client.get(f"{CONVERSATIONS}/cnv_missing").status_code == 404


def test_scopes(tenant):
    from platform_core.identity import services
    from platform_core.identity.models import KeyMode, KeyType

    contact = make_contact(tenant)
    _key, raw = services.api_key_create(organization=tenant.org, name="r", key_type=KeyType.SECRET,
                                        mode=KeyMode.TEST, scopes=["conversations:read"])
    reader = tenant.client(raw)
    assert reader.get(CONVERSATIONS).status_code == 200
    response = reader.post(CONVERSATIONS, {"contact_id": contact, "channel": "sms"},
                           format="json")
    assert response.status_code == 403


@pytest.mark.django_db(transaction=True)
def test_concurrent_inbound_never_forks_the_thread(tenant):
    results: list[str] = []
    errors: list[BaseException] = []
    barrier = threading.Barrier(6)

    def worker():
        try:
            barrier.wait()
            with tenant_context(tenant.org), transaction.atomic():
                conversation = conversation_for_inbound(organization=tenant.org,
                                                        contact_id="cnt_race", channel="sms")
                results.append(conversation.pk)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=worker) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    assert len(set(results)) == 1
    assert Conversation.objects.for_organization(tenant.org).count() == 1
    assert len(created_events(tenant)) == 1
