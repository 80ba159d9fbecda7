"""Contacts routes under the cross-tenant test."""

from contacts.models import ExportJob
from platform_core.tenancy.context import tenant_context
from tests.contacts.helpers import make_contact, make_list
from tests.cross_tenant import TenantRoute, register


def _contact(tenant) -> str:
    return make_contact(tenant, first_name="Victim", email=f"v@{tenant.org.slug}.example.com").pk


def _list(tenant) -> str:
    member = make_contact(tenant, first_name="Member")
    return make_list(tenant, "Victims", [member]).pk


def _export(tenant) -> str:
    with tenant_context(tenant.org):
        return ExportJob.objects.create(organization=tenant.org, filename="c.csv").pk


register(TenantRoute(
    name="contacts", list_url="/api/v1/contacts", detail_url="/api/v1/contacts/{id}",
    create=_contact, patch_body={"first_name": "Hacked"},
    sub_urls=("/api/v1/contacts/{id}/lists",),
))
register(TenantRoute(
    name="contact-lists", list_url="/api/v1/contacts/lists",
    detail_url="/api/v1/contacts/lists/{id}", create=_list, patch_body={"name": "Hacked"},
    sub_urls=("/api/v1/contacts/lists/{id}/members", "/api/v1/contacts/lists/{id}/stats"),
))
register(TenantRoute(
    name="contact-exports", list_url="/api/v1/contacts/exports",
    detail_url="/api/v1/contacts/exports/{id}", create=_export, methods=("GET",),
))
