"""Fixtures of the broadcast tests: contacts in bulk, lists, saved segments, and posting a
broadcast with its after-commit work (start, runners, sends, receipts) run eagerly."""

from __future__ import annotations

import pytest

from contacts.models import Contact, ContactList, ListMembership
from messaging.broadcasts.models import Broadcast, BroadcastRecipient
from messaging.models import Message
from platform_core.tenancy.context import tenant_context

BASE = "/api/v1/broadcasts"


@pytest.fixture(autouse=True)
def _fast_senders(settings):
    """No throttling unless a test asks for it (the throttle test sets its own rate)."""
    settings.MESSAGING_SENDER_RATE_PER_SECOND = 10_000
    return settings


def phone(n: int) -> str:
    return f"+1415555{n:04d}"


def make_contacts(tenant, count: int, *, start: int = 0, tags=None, **fields) -> list[Contact]:
    rows = [
        Contact(organization=tenant.org, first_name=f"Ana{start + i}", last_name="Diaz",
                phone=phone(start + i), email=f"ana{start + i}@example.com",
                tags=list(tags or []), **fields)
        for i in range(count)
    ]
    return Contact.objects.for_organization(tenant.org).bulk_create(rows)


def make_list(tenant, contacts, name: str = "Customers") -> ContactList:
    contact_list = ContactList.objects.for_organization(tenant.org).create(
        organization=tenant.org, name=name, contact_count=len(contacts))
    ListMembership.objects.for_organization(tenant.org).bulk_create([
        ListMembership(organization=tenant.org, contact=c, contact_list=contact_list)
        for c in contacts])
    return contact_list


@pytest.fixture
def post_broadcast(tenant, commit):
    """POST a broadcast as `tenant` and run what follows the commit (the whole run)."""

    def do(body: dict, *, client=None, headers=None):
        with commit():
            return (client or tenant.client()).post(BASE, body, format="json",
                                                    **(headers or {}))

    return do


def get_broadcast(tenant, broadcast_id: str, client=None) -> dict:
    response = (client or tenant.client()).get(f"{BASE}/{broadcast_id}")
    assert response.status_code == 200, response.content
    return response.json()["data"]


def campaign_messages(tenant, broadcast_id: str) -> list[Message]:
    with tenant_context(tenant.org):
        return list(Message.objects.filter(campaign_id=broadcast_id).order_by("created_at",
                                                                              "id"))


def recipients(tenant, broadcast_id: str) -> list[BroadcastRecipient]:
    with tenant_context(tenant.org):
        return list(BroadcastRecipient.objects.filter(broadcast_id=broadcast_id).order_by("id"))


def load_broadcast(tenant, broadcast_id: str) -> Broadcast:
    with tenant_context(tenant.org):
        return Broadcast.objects.get(pk=broadcast_id)


def recount(tenant, broadcast_id: str) -> dict[str, int]:
    """The counters recomputed from the messages and recipients themselves."""
    messages = campaign_messages(tenant, broadcast_id)
    rows = recipients(tenant, broadcast_id)
    statuses = [m.status for m in messages]
    return {
        "total_recipients": len(rows),
        "queued": len(messages),
        "sent": sum(1 for m in messages if m.sent_at is not None),
        "delivered": statuses.count("delivered"),
        "failed": sum(1 for s in statuses if s in ("failed", "undelivered", "expired")),
        "skipped_opted_out": sum(1 for r in rows if r.status == "skipped_opted_out"),
        "skipped_invalid": sum(1 for r in rows if r.status == "skipped_invalid"),
        "canceled": sum(1 for r in rows if r.status == "canceled"),
        "clicked": sum(1 for r in rows if r.clicked_at is not None),
    }
