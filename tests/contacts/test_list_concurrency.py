"""`contact_count` stays exact under concurrent adds and removes through real connections."""

from __future__ import annotations

import pytest

from contacts.models import ContactList, ListMembership
from tests.concurrency import run_together
from tests.contacts.helpers import LISTS, bulk_contacts, make_list

pytestmark = pytest.mark.django_db(transaction=True)


def _counts(contact_list):
    stored = ContactList._base_manager.get(pk=contact_list.pk).contact_count
    real = ListMembership._base_manager.filter(contact_list_id=contact_list.pk).count()
    return stored, real


def test_concurrent_adds_of_the_same_and_different_contacts(tenant):
    contacts = bulk_contacts(tenant, 8)
    contact_list = make_list(tenant)
    url = f"{LISTS}/{contact_list.pk}/members"

    def add(contact_id):
        return lambda: tenant.client().post(url, {"identifier": contact_id},
                                            format="json").status_code

    # Each contact added by three threads at once: exactly one 201 per contact.
    jobs = [add(c.pk) for c in contacts for _ in range(3)]
    statuses = run_together(jobs)
    assert statuses.count(201) == len(contacts)
    assert statuses.count(200) == 2 * len(contacts)
    assert _counts(contact_list) == (8, 8)


def test_concurrent_bulk_adds_and_removes(tenant):
    contacts = bulk_contacts(tenant, 40)
    contact_list = make_list(tenant, members=contacts[:20])
    url = f"{LISTS}/{contact_list.pk}/members"
    ids = [c.pk for c in contacts]

    def bulk(chunk):
        return lambda: tenant.client().post(f"{url}/bulk", {"contact_ids": chunk},
                                            format="json").json()["data"]["added"]

    def remove(contact_id):
        return lambda: tenant.client().delete(f"{url}/{contact_id}").status_code

    jobs = [bulk(ids[10:30]), bulk(ids[20:40]), bulk(ids[25:40])]
    jobs += [remove(cid) for cid in ids[:10]] + [remove(cid) for cid in ids[:5]]
    results = run_together(jobs)
    assert sum(results[:3]) == 20  # contacts 20..39 added once each, whoever won
    assert sorted(results[3:]).count(204) == 10  # each of the first ten removed once
    assert _counts(contact_list) == (30, 30)
