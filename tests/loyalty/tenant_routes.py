"""Loyalty member routes under the cross-tenant test (the program is per organization:
tests/loyalty/test_program.py checks one organization never sees another's)."""

from platform_core.events.services import tracked_event_record
from platform_core.tenancy.context import tenant_context
from tests.cross_tenant import TenantRoute, register


def _member(tenant) -> str:
    from contacts.models import Contact

    with tenant_context(tenant.org):
        contact = Contact.objects.for_organization(tenant.org).create(
            organization=tenant.org, first_name="Loyal", email="loyal@example.com")
        tracked_event_record(organization=tenant.org, name="purchase",
                             properties={"amount": 10}, contact_email=contact.email)
    return contact.pk


register(TenantRoute(name="loyalty-members", list_url="/api/v1/loyalty/members",
                     detail_url="/api/v1/loyalty/members/{id}", create=_member,
                     methods=("GET",)))
