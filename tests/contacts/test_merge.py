"""Merging a duplicate contact into another (POST /contacts/{id}/merge)."""

from __future__ import annotations

import pytest

from contacts.models import ContactList, ListMembership
from platform_core.events.models import Event, TrackedEvent
from platform_core.tenancy.context import tenant_context
from tests.contacts.helpers import CONTACTS, error_code, make_contact, make_list

pytestmark = pytest.mark.django_db


def merge(client, target_id, source_id):
    return client.post(f"{CONTACTS}/{target_id}/merge", {"source_id": source_id}, format="json")


def test_merge_moves_everything_and_deletes_the_source(tenant):
    target = make_contact(tenant, first_name="Ann", email="ann@x.com",
                          custom_fields={"plan": "pro", "seats": 3}, tags=["vip"])
    source = make_contact(tenant, first_name="Annie", last_name="Lee", phone="+14155550123",
                          custom_fields={"plan": "free", "region": "eu"}, tags=["beta", "vip"])
    shared = make_list(tenant, "Both", [target, source])
    only_source = make_list(tenant, "Source only", [source])
    with tenant_context(tenant.org):
        event = TrackedEvent.objects.create(organization=tenant.org, name="buy",
                                            contact_phone="+14155550123", contact_id=source.pk)
    response = merge(tenant.client(), target.pk, source.pk)
    assert response.status_code == 200, response.content
    data = response.json()["data"]
    assert data["id"] == target.pk
    assert data["first_name"] == "Ann"  # the target wins
    assert data["last_name"] == "Lee"  # an empty field is filled from the source
    assert data["phone"] == "+14155550123"  # moved although unique: the source is gone
    assert data["email"] == "ann@x.com"
    assert data["custom_fields"] == {"plan": "pro", "seats": 3, "region": "eu"}
    assert data["tags"] == ["vip", "beta"]
    assert tenant.client().get(f"{CONTACTS}/{source.pk}").status_code == 404
    event.refresh_from_db()
    assert event.contact_id == target.pk
    for contact_list, expected in ((shared, 1), (only_source, 1)):
        fresh = ContactList._base_manager.get(pk=contact_list.pk)
        rows = ListMembership._base_manager.filter(contact_list=contact_list)
        assert fresh.contact_count == rows.count() == expected
        assert list(rows.values_list("contact_id", flat=True)) == [target.pk]
    with tenant_context(tenant.org):
        merged = Event.objects.get(type="contact.merged")
        assert merged.data["source_id"] == source.pk
        assert merged.data["contact"]["id"] == target.pk
        deleted = Event.objects.get(type="contact.deleted")
        assert deleted.data == {**deleted.data, "id": source.pk, "merged_into": target.pk}


def test_merge_errors(tenant, other_tenant):
    target = make_contact(tenant, first_name="a")
    foreign = make_contact(other_tenant, first_name="b")
    client = tenant.client()
    itself = merge(client, target.pk, target.pk)
    assert itself.status_code == 422
    assert error_code(itself) == "VALIDATION_ERROR"
    unknown = merge(client, target.pk, foreign.pk)
    assert unknown.status_code == 404
    assert unknown.json()["error"]["details"]["field"] == "source_id"
    assert merge(client, "cnt_unknown", target.pk).status_code == 404
    missing = client.post(f"{CONTACTS}/{target.pk}/merge", {}, format="json")
    assert missing.status_code == 422
    # The other tenant's contact is untouched.
    assert other_tenant.client().get(f"{CONTACTS}/{foreign.pk}").status_code == 200


def test_failed_merge_changes_nothing(tenant, monkeypatch):
    target = make_contact(tenant, first_name="a")
    source = make_contact(tenant, first_name="b", email="b@x.com")
    contact_list = make_list(tenant, "L", [source])

    from contacts import services

    def boom(**kwargs):
        raise RuntimeError("audit down")

    monkeypatch.setattr(services, "audit_record", boom)
    assert merge(tenant.client(), target.pk, source.pk).status_code == 500
    assert tenant.client().get(f"{CONTACTS}/{source.pk}").status_code == 200
    rows = ListMembership._base_manager.filter(contact_list=contact_list)
    assert list(rows.values_list("contact_id", flat=True)) == [source.pk]
    assert ContactList._base_manager.get(pk=contact_list.pk).contact_count == 1
