"""Contact lists (Document 2, 2.1 and 4.1): CRUD, duplicate, stats, members by identifier,
bulk add, removal, member listing, the lists of a contact and the cached count."""

from __future__ import annotations

from datetime import timedelta

import pytest
import time_machine
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from contacts.models import ContactList, ListMembership
from platform_core.audit.models import AuditLogEntry
from platform_core.tenancy.context import tenant_context
from tests.contacts.helpers import (
    CONTACTS,
    LISTS,
    bulk_contacts,
    error_code,
    make_contact,
    make_list,
)

pytestmark = pytest.mark.django_db


def members_url(list_id: str) -> str:
    return f"{LISTS}/{list_id}/members"


def count_of(contact_list) -> int:
    return ContactList._base_manager.get(pk=contact_list.pk).contact_count


def real_count(contact_list) -> int:
    return ListMembership._base_manager.filter(contact_list_id=contact_list.pk).count()


# --- CRUD ----------------------------------------------------------------------------------


def test_create_read_update_delete(tenant):
    client = tenant.client()
    response = client.post(LISTS, {"name": "Customers"}, format="json")
    assert response.status_code == 201, response.content
    data = response.json()["data"]
    assert data["id"].startswith("lst_")
    assert data["description"] is None
    assert data["contact_count"] == 0
    assert set(data) == {"id", "name", "description", "contact_count", "created_at",
                         "updated_at"}
    url = f"{LISTS}/{data['id']}"
    patched = client.patch(url, {"description": "Paying ones"}, format="json")
    assert patched.json()["data"]["description"] == "Paying ones"
    assert patched.json()["data"]["name"] == "Customers"
    assert client.get(url).json()["data"]["description"] == "Paying ones"
    assert data["id"] in [row["id"] for row in client.get(LISTS).json()["data"]]
    assert client.delete(url).status_code == 204
    assert client.get(url).status_code == 404


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({}, "name"),
        ({"name": ""}, "name"),
        ({"name": "x" * 256}, "name"),
        ({"name": "ok", "description": "d" * 1001}, "description"),
    ],
)
def test_list_limits_are_422(tenant, body, field):
    response = tenant.client().post(LISTS, body, format="json")
    assert response.status_code == 422
    assert field in [i["field"] for i in response.json()["error"]["details"]["issues"]]


def test_list_limits_at_the_edge(tenant):
    response = tenant.client().post(LISTS, {"name": "x" * 255, "description": "d" * 1000},
                                    format="json")
    assert response.status_code == 201


def test_patch_cannot_overwrite_the_count(tenant):
    contact_list = make_list(tenant, members=[make_contact(tenant, first_name="a")])
    response = tenant.client().patch(f"{LISTS}/{contact_list.pk}",
                                     {"name": "Renamed", "contact_count": 99}, format="json")
    assert response.status_code == 200
    assert response.json()["data"]["contact_count"] == 1


def test_deleting_a_list_keeps_its_contacts(tenant):
    contact = make_contact(tenant, first_name="Stay")
    contact_list = make_list(tenant, members=[contact])
    tenant.client().delete(f"{LISTS}/{contact_list.pk}")
    assert tenant.client().get(f"{CONTACTS}/{contact.pk}").status_code == 200


# --- Members by identifier -------------------------------------------------------------------


@pytest.mark.parametrize("form", ["id", "e164", "national", "email"])
def test_add_member_by_identifier(tenant, form):
    contact = make_contact(tenant, phone="+14155550123", email="ann@x.com")
    contact_list = make_list(tenant)
    identifier = {"id": contact.pk, "e164": "+14155550123", "national": "(415) 555-0123",
                  "email": "ANN@x.com"}[form]
    client = tenant.client()
    response = client.post(members_url(contact_list.pk), {"identifier": identifier},
                           format="json")
    assert response.status_code == 201, response.content
    assert response.json()["data"] == {"list_id": contact_list.pk, "contact_id": contact.pk,
                                       "already_member": False}
    assert count_of(contact_list) == 1


def test_adding_again_is_200_and_writes_nothing(tenant):
    contact = make_contact(tenant, email="ann@x.com")
    contact_list = make_list(tenant, members=[contact])
    audits = AuditLogEntry.objects.filter(organization=tenant.org).count()
    response = tenant.client().post(members_url(contact_list.pk), {"identifier": "ann@x.com"},
                                    format="json")
    assert response.status_code == 200
    assert response.json()["data"]["already_member"] is True
    assert count_of(contact_list) == real_count(contact_list) == 1
    assert AuditLogEntry.objects.filter(organization=tenant.org).count() == audits


@pytest.mark.parametrize("identifier", ["cnt_01NOTTHERE", "nobody@x.com", "+14155550199",
                                        "garbage"])
def test_unresolvable_identifier_is_404(tenant, identifier):
    contact_list = make_list(tenant)
    response = tenant.client().post(members_url(contact_list.pk), {"identifier": identifier},
                                    format="json")
    assert response.status_code == 404
    assert error_code(response) == "CONTACT_NOT_FOUND_FOR_IDENTIFIER"


def test_other_tenants_contact_is_not_resolvable(tenant, other_tenant):
    foreign = make_contact(other_tenant, email="ann@x.com", phone="+14155550123")
    contact_list = make_list(tenant)
    for identifier in (foreign.pk, "ann@x.com", "+14155550123"):
        response = tenant.client().post(members_url(contact_list.pk),
                                        {"identifier": identifier}, format="json")
        assert error_code(response) == "CONTACT_NOT_FOUND_FOR_IDENTIFIER"


def test_member_add_to_unknown_list_is_404(tenant):
    make_contact(tenant, email="ann@x.com")
    response = tenant.client().post(members_url("lst_nope"), {"identifier": "ann@x.com"},
                                    format="json")
    assert response.status_code == 404
    assert error_code(response) == "NOT_FOUND"


# --- Bulk add -------------------------------------------------------------------------------


def test_bulk_add_reports_failed_ids(tenant, other_tenant):
    mine = bulk_contacts(tenant, 3)
    foreign = make_contact(other_tenant, first_name="x")
    contact_list = make_list(tenant, members=[mine[0]])
    ids = [c.pk for c in mine] + [foreign.pk, "cnt_unknown", mine[1].pk]
    response = tenant.client().post(f"{members_url(contact_list.pk)}/bulk",
                                    {"contact_ids": ids}, format="json")
    assert response.status_code == 200, response.content
    assert response.json()["data"] == {"added": 2,
                                       "failed_contact_ids": [foreign.pk, "cnt_unknown"]}
    assert count_of(contact_list) == real_count(contact_list) == 3


def test_bulk_add_limit(tenant):
    contact_list = make_list(tenant)
    url = f"{members_url(contact_list.pk)}/bulk"
    at_limit = [c.pk for c in bulk_contacts(tenant, 1000)]
    response = tenant.client().post(url, {"contact_ids": at_limit}, format="json")
    assert response.json()["data"]["added"] == 1000
    assert count_of(contact_list) == 1000
    over = tenant.client().post(url, {"contact_ids": at_limit + ["cnt_x"]}, format="json")
    assert over.status_code == 422
    assert error_code(over) == "VALIDATION_ERROR"
    empty = tenant.client().post(url, {"contact_ids": []}, format="json")
    assert empty.status_code == 422


# --- Removal, listing, stats, duplicate -----------------------------------------------------


def test_remove_member(tenant):
    contact = make_contact(tenant, first_name="a")
    contact_list = make_list(tenant, members=[contact])
    url = f"{members_url(contact_list.pk)}/{contact.pk}"
    assert tenant.client().delete(url).status_code == 204
    assert count_of(contact_list) == 0
    again = tenant.client().delete(url)
    assert again.status_code == 404
    assert count_of(contact_list) == 0


def test_deleting_a_contact_decrements_its_lists(tenant):
    contact = make_contact(tenant, first_name="a")
    keep = make_contact(tenant, first_name="b")
    lists = [make_list(tenant, f"L{i}", [contact, keep]) for i in range(2)]
    tenant.client().delete(f"{CONTACTS}/{contact.pk}")
    for contact_list in lists:
        assert count_of(contact_list) == real_count(contact_list) == 1


def test_member_rows_and_q_and_pagination(tenant):
    ann = make_contact(tenant, first_name="Ann", phone="+14155550123", email="ann@acme.com",
                       tags=["vip"])
    others = bulk_contacts(tenant, 6)
    outsider = make_contact(tenant, first_name="Ann", email="ann2@acme.com")
    contact_list = make_list(tenant, members=[ann, *others])
    client = tenant.client()
    rows = client.get(members_url(contact_list.pk), {"q": "ann"}).json()["data"]
    assert [r["id"] for r in rows] == [ann.pk]
    assert outsider.pk not in [r["id"] for r in rows]
    row = rows[0]
    assert row["id"] == row["contact_id"] == ann.pk
    assert row["list_id"] == contact_list.pk
    assert (row["first_name"], row["phone"], row["email"]) == ("Ann", "+14155550123",
                                                               "ann@acme.com")
    assert "added_at" in row
    for q in ("tag:vip", "email:*@acme.com", "(415) 555-0123"):
        assert [r["id"] for r in client.get(members_url(contact_list.pk),
                                            {"q": q}).json()["data"]] == [ann.pk]

    seen: list[str] = []
    params = {"limit": 2, "q": "email:*@bulk.example.com"}
    while True:
        response = client.get(members_url(contact_list.pk), params)
        assert response.status_code == 200
        seen += [r["id"] for r in response.json()["data"]]
        pagination = response.json()["meta"]["pagination"]
        if not pagination["has_more"]:
            break
        params["cursor"] = pagination["cursor"]
    assert sorted(seen) == sorted(c.pk for c in others)


def test_member_listing_query_count_is_constant(tenant):
    contact_list = make_list(tenant)
    client = tenant.client()
    url = members_url(contact_list.pk)
    client.get(url)  # warm the credential cache

    def queries() -> int:
        with CaptureQueriesContext(connection) as captured:
            assert client.get(url, {"limit": 100}).status_code == 200
        return len(captured)

    with tenant_context(tenant.org):
        from contacts import services
        from tests.contacts.helpers import owner_principal

        services.list_members_bulk_add(contact_list=contact_list,
                                       contact_ids=[c.pk for c in bulk_contacts(tenant, 2)],
                                       principal=owner_principal(tenant))
        small = queries()
        services.list_members_bulk_add(contact_list=contact_list,
                                       contact_ids=[c.pk for c in bulk_contacts(tenant, 60)],
                                       principal=owner_principal(tenant))
        large = queries()
    assert small == large <= 6


def test_lists_of_a_contact(tenant):
    contact = make_contact(tenant, first_name="a")
    inside = [make_list(tenant, f"In {i}", [contact]) for i in range(3)]
    make_list(tenant, "Out")
    client = tenant.client()
    response = client.get(f"{CONTACTS}/{contact.pk}/lists")
    assert response.status_code == 200
    assert {r["id"] for r in response.json()["data"]} == {c.pk for c in inside}
    assert client.get(f"{CONTACTS}/cnt_unknown/lists").status_code == 404

    def queries() -> int:
        with CaptureQueriesContext(connection) as captured:
            client.get(f"{CONTACTS}/{contact.pk}/lists")
        return len(captured)

    small = queries()
    for i in range(10):
        make_list(tenant, f"More {i}", [contact])
    assert queries() == small


def test_stats(tenant):
    with_phone = make_contact(tenant, phone="+14155550123")
    with_email = make_contact(tenant, email="a@x.com")
    both = make_contact(tenant, phone="+14155550124", email="b@x.com")
    neither = make_contact(tenant, first_name="n")
    contact_list = make_list(tenant)
    with time_machine.travel(timezone.now() - timedelta(days=10)):
        tenant.client().post(f"{members_url(contact_list.pk)}/bulk",
                             {"contact_ids": [with_phone.pk]}, format="json")
    tenant.client().post(f"{members_url(contact_list.pk)}/bulk",
                         {"contact_ids": [with_email.pk, both.pk, neither.pk]}, format="json")
    response = tenant.client().get(f"{LISTS}/{contact_list.pk}/stats")
    assert response.status_code == 200
    assert response.json()["data"] == {
        "list_id": contact_list.pk, "contact_count": 4, "with_phone": 2, "with_email": 2,
        "without_phone_or_email": 1, "added_last_7_days": 3, "added_last_30_days": 4,
    }


def test_duplicate_copies_members(tenant):
    members = bulk_contacts(tenant, 5)
    source = make_list(tenant, "Source", members)
    tenant.client().patch(f"{LISTS}/{source.pk}", {"description": "desc"}, format="json")
    response = tenant.client().post(f"{LISTS}/{source.pk}/duplicate", {}, format="json")
    assert response.status_code == 201, response.content
    copy = response.json()["data"]
    assert copy["id"] != source.pk
    assert copy["name"] == "Source (copy)"
    assert copy["description"] == "desc"
    assert copy["contact_count"] == 5
    with tenant_context(tenant.org):
        assert set(
            ListMembership.objects.filter(contact_list_id=copy["id"]).values_list(
                "contact_id", flat=True)
        ) == {c.pk for c in members}
    named = tenant.client().post(f"{LISTS}/{source.pk}/duplicate", {"name": "Other"},
                                 format="json")
    assert named.json()["data"]["name"] == "Other"
    # The source is untouched.
    assert count_of(source) == real_count(source) == 5


def test_list_listing_query_count_is_constant(tenant):
    client = tenant.client()
    client.get(LISTS)

    def queries() -> int:
        with CaptureQueriesContext(connection) as captured:
            assert client.get(LISTS, {"limit": 100}).status_code == 200
        return len(captured)

    make_list(tenant, "one")
    small = queries()
    for i in range(20):
        make_list(tenant, f"L{i}")
    assert queries() == small
