"""Organizations and memberships in the console."""

from __future__ import annotations

from django.contrib.admin.utils import quote

from platform_core.audit.models import AuditLogEntry
from platform_core.tenancy.models import Membership, Organization, Role

from .conftest import ADMIN, add_member, form_data, inline_prefix

ORGS = f"{ADMIN}/organization/"
MEMBERS = f"{ADMIN}/membership/"


def _membership(pk) -> Membership:
    return Membership.objects.dangerously_unscoped().get(pk=pk)


def _inline_index(response, membership) -> int:
    formset = response.context["inline_admin_formsets"][0].formset
    return next(i for i, form in enumerate(formset.forms) if form.instance.pk == membership.pk)


def test_organization_page_lists_members_with_links(console, tenant):
    member = add_member(tenant, Role.DEVELOPER)
    response = console.get(f"{ORGS}{tenant.org.pk}/change/")
    assert response.status_code == 200
    html = response.content.decode()
    assert tenant.org.pk in html  # the read-only id
    assert f"{ADMIN}/user/{quote(member.user_id)}/change/" in html
    assert member.user.email in html
    assert f"{ADMIN}/apikey/?organization={tenant.org.pk}" in html


def test_no_add_and_no_delete_of_organizations(console, tenant):
    assert console.get(f"{ORGS}add/").status_code == 403
    assert console.get(f"{ORGS}{tenant.org.pk}/delete/").status_code == 403
    assert f"{ORGS}add/" not in console.get(ORGS).content.decode()


def test_edit_organization_and_member_role_is_audited(console, tenant, operator):
    member = add_member(tenant, Role.VIEWER)
    url = f"{ORGS}{tenant.org.pk}/change/"
    page = console.get(url)
    data = form_data(page)
    data["name"] = "Renamed Org"
    data[f"{inline_prefix(page)}-{_inline_index(page, member)}-role"] = Role.ADMIN
    response = console.post(url, data)
    assert response.status_code == 302, response.context["errors"] if response.context else ""
    tenant.org.refresh_from_db()
    assert tenant.org.name == "Renamed Org"
    assert _membership(member.pk).role == Role.ADMIN

    entry = AuditLogEntry.objects.get(action="organization.updated", organization=tenant.org)
    assert (entry.actor_type, entry.actor_id, entry.actor_display) == (
        "operator", operator.pk, operator.email)
    assert entry.metadata["via"] == "operator_console"
    changes = entry.metadata["changes"]
    assert {"changed": {"fields": ["Name"]}} in changes
    assert any(change.get("changed", {}).get("name") == "membership" for change in changes)


def test_deactivating_an_organization_refuses_its_key_at_once(console, tenant):
    api = tenant.client()
    assert api.get("/api/v1/organization").status_code == 200
    url = f"{ORGS}{tenant.org.pk}/change/"
    data = form_data(console.get(url))
    data.pop("is_active")
    assert console.post(url, data).status_code == 302
    assert not Organization.objects.get(pk=tenant.org.pk).is_active
    answer = api.get("/api/v1/organization")
    assert answer.status_code == 401
    assert answer.json()["error"]["code"] == "INVALID_API_KEY"


def test_last_owner_cannot_be_demoted_or_removed_inline(console, tenant):
    owner = Membership.objects.for_organization(tenant.org).get(user=tenant.owner)
    url = f"{ORGS}{tenant.org.pk}/change/"
    page = console.get(url)
    prefix = f"{inline_prefix(page)}-{_inline_index(page, owner)}"

    data = form_data(page)
    data[f"{prefix}-role"] = Role.VIEWER
    response = console.post(url, data)
    assert response.status_code == 200
    assert "An organization keeps at least one owner." in response.content.decode()
    assert _membership(owner.pk).role == Role.OWNER

    data = form_data(page)
    data[f"{prefix}-DELETE"] = "on"
    response = console.post(url, data)
    assert response.status_code == 200
    assert "An organization keeps at least one owner." in response.content.decode()
    assert Membership.objects.for_organization(tenant.org).filter(pk=owner.pk).exists()


def test_owner_can_be_demoted_when_another_is_promoted_together(console, tenant):
    owner = Membership.objects.for_organization(tenant.org).get(user=tenant.owner)
    member = add_member(tenant, Role.ADMIN)
    url = f"{ORGS}{tenant.org.pk}/change/"
    page = console.get(url)
    data = form_data(page)
    data[f"{inline_prefix(page)}-{_inline_index(page, owner)}-role"] = Role.ADMIN
    data[f"{inline_prefix(page)}-{_inline_index(page, member)}-role"] = Role.OWNER
    assert console.post(url, data).status_code == 302
    assert _membership(owner.pk).role == Role.ADMIN
    assert _membership(member.pk).role == Role.OWNER


def test_membership_add_and_duplicate(console, tenant, tenant_factory, operator):
    other = tenant_factory()
    response = console.post(f"{MEMBERS}add/", {"user": other.owner.pk,
                                               "organization": tenant.org.pk, "role": "agent"})
    assert response.status_code == 302, response.content.decode()[:2000]
    added = Membership.objects.for_organization(tenant.org).get(user=other.owner)
    assert added.role == "agent"
    entry = AuditLogEntry.objects.get(action="membership.created", target_id=added.pk)
    assert (entry.actor_type, entry.organization_id) == ("operator", tenant.org.pk)

    # The uniqueness check runs as the row's tenant: a form error, not a crash.
    response = console.post(f"{MEMBERS}add/", {"user": other.owner.pk,
                                               "organization": tenant.org.pk, "role": "viewer"})
    assert response.status_code == 200
    assert "already exists" in response.content.decode()
    assert Membership.objects.for_organization(tenant.org).filter(user=other.owner).count() == 1


def test_membership_page_role_change_and_last_owner(console, tenant):
    owner = Membership.objects.for_organization(tenant.org).get(user=tenant.owner)
    member = add_member(tenant, Role.VIEWER)
    response = console.post(f"{MEMBERS}{member.pk}/change/", {"role": Role.DEVELOPER})
    assert response.status_code == 302
    assert _membership(member.pk).role == Role.DEVELOPER

    response = console.post(f"{MEMBERS}{owner.pk}/change/", {"role": Role.VIEWER})
    assert response.status_code == 200
    assert "An organization keeps at least one owner." in response.content.decode()
    assert _membership(owner.pk).role == Role.OWNER


def test_membership_delete_and_last_owner(console, tenant):
    owner = Membership.objects.for_organization(tenant.org).get(user=tenant.owner)
    member = add_member(tenant, Role.VIEWER)
    response = console.post(f"{MEMBERS}{owner.pk}/delete/", {"post": "yes"})
    assert response.status_code == 200
    assert "An organization keeps at least one owner." in response.content.decode()
    assert Membership.objects.for_organization(tenant.org).filter(pk=owner.pk).exists()

    response = console.post(MEMBERS, {"action": "delete_selected", "post": "yes",
                                      "_selected_action": [owner.pk, member.pk]})
    assert response.status_code == 200
    assert Membership.objects.for_organization(tenant.org).count() == 2

    assert console.post(f"{MEMBERS}{member.pk}/delete/", {"post": "yes"}).status_code == 302
    assert not Membership.objects.for_organization(tenant.org).filter(pk=member.pk).exists()
    assert AuditLogEntry.objects.filter(action="membership.deleted", target_id=member.pk).exists()


def test_removed_member_session_ends(console, tenant):
    member = add_member(tenant, Role.DEVELOPER, email="dev@example.com")
    client = tenant.session_client(member.user, "Member-Horse-5-battery")
    assert client.get("/api/v1/organization").status_code == 200
    assert console.post(f"{MEMBERS}{member.pk}/delete/", {"post": "yes"}).status_code == 302
    assert client.get("/api/v1/organization").status_code == 401
