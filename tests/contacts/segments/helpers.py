"""Helpers of the segments tests: contacts, lists, tracked events and clicks written
straight through the ORM (the behaviour under test is reached over HTTP)."""

from __future__ import annotations

import itertools
from datetime import timedelta

from django.utils import timezone

from contacts.models import Contact, ContactList, ListMembership
from messaging.links import services as link_services
from platform_core.events.models import TrackedEvent
from platform_core.identity import services as identity_services
from platform_core.identity.models import KeyType
from platform_core.identity.principal import Principal
from platform_core.tenancy.context import tenant_context

SEGMENTS = "/api/v1/contacts/segments"
AUTOPILOT = "/api/v1/contacts/segments/autopilot"
SUGGEST = "/api/v1/segments/auto-suggest"
EXPORT = "/api/v1/segments/export.csv"
FROM_CLICKS = "/api/v1/segments/from-clicks"
PASSWORD = "Segment-Horse-5-staple"
_seq = itertools.count(1)


def contact(tenant, *, created_days_ago: float | None = None, **fields) -> Contact:
    if created_days_ago is not None:
        fields["created_at"] = timezone.now() - timedelta(days=created_days_ago)
    return Contact.objects.for_organization(tenant.org).create(organization=tenant.org,
                                                               **fields)


def contact_list(tenant, name: str, members=()) -> ContactList:
    lst = ContactList.objects.for_organization(tenant.org).create(
        organization=tenant.org, name=name, contact_count=len(members))
    ListMembership.objects.for_organization(tenant.org).bulk_create([
        ListMembership(organization=tenant.org, contact=c, contact_list=lst) for c in members
    ])
    return lst


def track(tenant, who: Contact | None, name: str, *, times: int = 1, days_ago: float = 0):
    at = timezone.now() - timedelta(days=days_ago)
    TrackedEvent.objects.for_organization(tenant.org).bulk_create([
        TrackedEvent(organization=tenant.org, name=name, contact_id=who.pk if who else None,
                     occurred_at=at)
        for _ in range(times)
    ])


def link(tenant, *, campaign_id: str | None = None, contact_id: str | None = None):
    return link_services.short_link_create(organization=tenant.org,
                                           target_url="https://shop.example.com/sale",
                                           campaign_id=campaign_id, contact_id=contact_id)


def click(short_link, who: Contact | None, *, days_ago: float = 0):
    return link_services.record_click(
        link=short_link, contact_id=who.pk if who else None, user_agent="pytest",
        ip="203.0.113.9", clicked_at=timezone.now() - timedelta(days=days_ago))


def rule(field: str, operator: str, value=None, **extra) -> dict:
    item = {"field": field, "operator": operator}
    if value is not None:
        item["value"] = value
    item.update(extra)
    return item


def tree(*rules, op: str = "and") -> dict:
    return {"op": op, "rules": list(rules)}


def create_segment(tenant, filters: dict, name: str = "Segment", client=None) -> dict:
    response = (client or tenant.client()).post(SEGMENTS, {"name": name, "filters": filters},
                                                format="json")
    assert response.status_code == 201, response.content
    return response.json()["data"]


def member_ids(tenant, segment_id: str, client=None) -> set[str]:
    ids: set[str] = set()
    cursor = None
    client = client or tenant.client()
    while True:
        url = f"{SEGMENTS}/{segment_id}/members?limit=200" + (f"&cursor={cursor}" if cursor else "")
        response = client.get(url)
        assert response.status_code == 200, response.content
        ids |= {row["id"] for row in response.json()["data"]}
        cursor = response.json()["meta"]["pagination"]["cursor"]
        if not cursor:
            return ids


def matches(tenant, filters: dict) -> set[str]:
    """The ids a saved segment of `filters` materializes (and its member_count agrees)."""
    segment = create_segment(tenant, filters)
    ids = member_ids(tenant, segment["id"])
    assert segment["member_count"] == len(ids)
    return ids


def api_key(tenant, scopes: list[str]) -> str:
    _key, raw = identity_services.api_key_create(
        organization=tenant.org, name=f"k{next(_seq)}", key_type=KeyType.SECRET, mode=None,
        scopes=scopes)
    return raw


def member_client(tenant, role: str):
    owner = Principal(kind="session", organization=tenant.org, role="owner",
                      user_id=tenant.owner.pk)
    with tenant_context(tenant.org):
        membership = identity_services.user_invite(
            principal=owner, email=f"{role}-{next(_seq)}-{tenant.org.slug}@example.com",
            name=role.title(), role=role, password=PASSWORD)
    return tenant.session_client(membership.user, PASSWORD)
