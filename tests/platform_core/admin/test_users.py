"""Users in the console: email login, no username, memberships inline."""

from __future__ import annotations

from django.contrib.admin.utils import quote

from platform_core.audit.models import AuditLogEntry
from platform_core.identity.models import User
from platform_core.tenancy.models import Membership, Role

from .conftest import ADMIN, add_member, form_data, inline_prefix

USERS = f"{ADMIN}/user/"
PASSWORD = "Brand-new-Horse-8"


def test_add_user_with_email_and_password_twice(console, operator):
    page = console.get(f"{USERS}add/")
    assert page.status_code == 200
    assert set(page.context["adminform"].form.fields) == {"email", "name", "password1",
                                                          "password2"}
    response = console.post(f"{USERS}add/", {"email": "New.Person@Example.COM", "name": "New",
                                             "password1": PASSWORD, "password2": PASSWORD})
    assert response.status_code == 302, response.content.decode()[:3000]
    user = User.objects.get(email="new.person@example.com")
    assert user.check_password(PASSWORD)
    assert not user.is_staff
    assert response["Location"] == f"{USERS}{quote(user.pk)}/change/"
    entry = AuditLogEntry.objects.get(action="user.created", target_id=user.pk)
    assert (entry.actor_type, entry.actor_id, entry.organization_id) == (
        "operator", operator.pk, None)


def test_add_user_refuses_duplicates_and_mismatched_passwords(console, tenant):
    response = console.post(f"{USERS}add/", {"email": tenant.owner.email.upper(),
                                             "password1": PASSWORD, "password2": PASSWORD})
    assert response.status_code == 200
    assert "already exists" in response.content.decode()
    response = console.post(f"{USERS}add/", {"email": "x@example.com",
                                             "password1": PASSWORD, "password2": PASSWORD + "x"})
    assert response.status_code == 200
    assert not User.objects.filter(email="x@example.com").exists()


def test_change_page_has_password_link_and_memberships(console, tenant):
    response = console.get(f"{USERS}{tenant.owner.pk}/change/")
    assert response.status_code == 200
    html = response.content.decode()
    assert "../password/" in html
    assert tenant.owner.pk in html
    assert f"{ADMIN}/organization/{quote(tenant.org.pk)}/change/" in html
    assert tenant.owner.password not in html


def test_password_change_through_the_console(console, tenant):
    url = f"{USERS}{tenant.owner.pk}/password/"
    assert console.get(url).status_code == 200
    response = console.post(url, {"password1": PASSWORD, "password2": PASSWORD,
                                  "usable_password": "true"})
    assert response.status_code == 302, response.content.decode()[:3000]
    tenant.owner.refresh_from_db()
    assert tenant.owner.check_password(PASSWORD)


def test_role_edit_from_the_user_page(console, tenant, tenant_factory):
    other = tenant_factory()
    member = add_member(tenant, Role.VIEWER)
    second = Membership.objects.for_organization(other.org).create(
        organization=other.org, user=member.user, role=Role.AGENT)
    url = f"{USERS}{member.user_id}/change/"
    page = console.get(url)
    assert page.status_code == 200
    formset = page.context["inline_admin_formsets"][0].formset
    assert {form.instance.pk for form in formset.forms} == {member.pk, second.pk}
    index = next(i for i, form in enumerate(formset.forms) if form.instance.pk == second.pk)
    data = form_data(page)
    data[f"{inline_prefix(page)}-{index}-role"] = Role.DEVELOPER
    response = console.post(url, data)
    assert response.status_code == 302, response.context["errors"] if response.context else ""
    assert Membership.objects.for_organization(other.org).get(pk=second.pk).role == Role.DEVELOPER
    assert Membership.objects.for_organization(tenant.org).get(pk=member.pk).role == Role.VIEWER


def test_deleting_the_last_owner_user_is_refused(console, tenant):
    response = console.post(f"{USERS}{tenant.owner.pk}/delete/", {"post": "yes"})
    assert response.status_code == 200
    assert "An organization keeps at least one owner." in response.content.decode()
    assert User.objects.filter(pk=tenant.owner.pk).exists()


def test_search_and_filters(console, tenant):
    response = console.get(USERS, {"q": tenant.owner.pk, "is_superuser__exact": "0"})
    assert response.status_code == 200
    assert [u.pk for u in response.context["cl"].result_list] == [tenant.owner.pk]
