"""Helpers of the contacts tests: contacts and lists made through the services, members
with a role."""

from __future__ import annotations

import itertools

from contacts import services
from contacts.models import Contact, ContactList
from platform_core.identity import services as identity_services
from platform_core.identity.models import User
from platform_core.identity.principal import Principal
from platform_core.tenancy.context import tenant_context

CONTACTS = "/api/v1/contacts"
LISTS = "/api/v1/contacts/lists"
PASSWORD = "Another-Horse-7-staple"
_seq = itertools.count(1)


def owner_principal(tenant) -> Principal:
    return Principal(kind="session", organization=tenant.org, role="owner",
                     user_id=tenant.owner.pk)


def make_contact(tenant, **fields) -> Contact:
    with tenant_context(tenant.org):
        return services.contact_create(organization=tenant.org,
                                       principal=owner_principal(tenant), **fields)


def make_list(tenant, name: str = "Customers", members: list[Contact] = ()) -> ContactList:
    with tenant_context(tenant.org):
        contact_list = services.list_create(organization=tenant.org,
                                            principal=owner_principal(tenant), name=name)
        if members:
            services.list_members_bulk_add(contact_list=contact_list,
                                           contact_ids=[c.pk for c in members],
                                           principal=owner_principal(tenant))
            contact_list.refresh_from_db()
    return contact_list


def bulk_contacts(tenant, count: int, **common) -> list[Contact]:
    """Many contacts at once (ORM bulk insert), phone and email unique per row."""
    start = next(_seq) * 100_000
    rows = [
        Contact(organization=tenant.org, first_name=f"Person{i}", last_name="Bulk",
                email=f"p{start + i}@bulk.example.com", **common)
        for i in range(count)
    ]
    return Contact.objects.for_organization(tenant.org).bulk_create(rows)


def add_member(tenant, role: str) -> User:
    email = f"{role}-{next(_seq)}-{tenant.org.slug}@example.com"
    with tenant_context(tenant.org):
        membership = identity_services.user_invite(
            principal=owner_principal(tenant), email=email, name=role.title(), role=role,
            password=PASSWORD,
        )
    return membership.user


def client_with_role(tenant, role: str):
    if role == "owner":
        return tenant.session_client()
    return tenant.session_client(add_member(tenant, role), PASSWORD)


def error_code(response) -> str:
    return response.json()["error"]["code"]
