"""Users of an organization (0-conventions.md section 2): roles, last owner, memberships."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from platform_core.identity.models import User
from platform_core.tenancy.models import Membership

from .conftest import PASSWORD, add_member, assert_error, bearer, login, session_for

URL = "/api/v1/users"


def invite(client, email, role="viewer", **extra):
    return client.post(
        URL, {"email": email, "name": "New Person", "role": role, **extra}, format="json"
    )


def test_list_and_detail(tenant):
    viewer = add_member(tenant, "viewer")
    client = tenant.session_client()
    response = client.get(URL)
    assert response.status_code == 200, response.content
    items = {i["id"]: i for i in response.json()["data"]}
    assert set(items) == {tenant.owner.pk, viewer.pk}
    assert items[tenant.owner.pk]["role"] == "owner"
    assert set(items[viewer.pk]) == {"id", "email", "name", "role", "is_active", "joined_at"}
    detail = client.get(f"{URL}/{viewer.pk}").json()["data"]
    assert detail == items[viewer.pk]
    assert_error(client.get(f"{URL}/usr_doesnotexist"), 404, "NOT_FOUND")


def test_member_of_another_org_is_not_found(tenant, other_tenant):
    assert_error(tenant.session_client().get(f"{URL}/{other_tenant.owner.pk}"), 404, "NOT_FOUND")


def test_owner_adds_user_who_can_log_in(tenant):
    response = invite(
        tenant.session_client(), "New.Person@Example.com", "developer", password=PASSWORD
    )
    assert response.status_code == 201, response.content
    data = response.json()["data"]
    assert data["id"].startswith("usr_")
    assert (data["email"], data["role"], data["name"]) == (
        "new.person@example.com",
        "developer",
        "New Person",
    )
    logged_in = login("new.person@example.com", PASSWORD)
    assert logged_in.status_code == 200
    assert logged_in.json()["data"]["organization"]["id"] == tenant.org.pk


def test_added_without_password_cannot_log_in(tenant):
    response = invite(tenant.session_client(), "nopass@example.com")
    assert response.status_code == 201
    assert not User.objects.get(email="nopass@example.com").has_usable_password()


def test_weak_password_is_422(tenant):
    assert_error(
        invite(tenant.session_client(), "weak@example.com", password="123"), 422, "VALIDATION_ERROR"
    )


def test_invalid_role_or_email_is_422(tenant):
    client = tenant.session_client()
    assert_error(invite(client, "x@example.com", role="superuser"), 422, "VALIDATION_ERROR")
    assert_error(invite(client, "not-an-email"), 422, "VALIDATION_ERROR")


def test_duplicate_member_is_409(tenant):
    client = tenant.session_client()
    assert invite(client, "dup@example.com").status_code == 201
    assert_error(invite(client, "DUP@example.com"), 409, "ALREADY_EXISTS")
    assert_error(invite(client, tenant.owner.email), 409, "ALREADY_EXISTS")


def test_user_in_several_organizations(tenant, other_tenant):
    user = add_member(tenant, "admin")
    response = invite(
        other_tenant.session_client(), user.email, "viewer", password="Totally-Different-8-pass"
    )
    assert response.status_code == 201
    assert response.json()["data"]["id"] == user.pk
    # Joining a second organization does not change the person's password.
    assert_error(login(user.email, "Totally-Different-8-pass"), 401, "INVALID_CREDENTIALS")
    first = login(user.email, PASSWORD, organization=tenant.org.slug).json()["data"]
    second = login(user.email, PASSWORD, organization=other_tenant.org.slug).json()["data"]
    assert first["organization"]["id"] == tenant.org.pk
    assert second["organization"]["id"] == other_tenant.org.pk
    assert bearer(first["token"]).get(URL).status_code == 200
    assert_error(bearer(second["token"]).get(URL), 403, "INSUFFICIENT_PERMISSIONS")


@pytest.mark.parametrize("role", ["developer", "agent", "viewer"])
def test_lower_roles_cannot_write(tenant, role):
    client = session_for(tenant, add_member(tenant, role))
    target = add_member(tenant, "viewer")
    assert_error(invite(client, "x@example.com"), 403, "INSUFFICIENT_PERMISSIONS")
    assert_error(
        client.patch(f"{URL}/{target.pk}", {"role": "agent"}, format="json"),
        403,
        "INSUFFICIENT_PERMISSIONS",
    )
    assert_error(client.delete(f"{URL}/{target.pk}"), 403, "INSUFFICIENT_PERMISSIONS")
    assert Membership.objects.for_organization(tenant.org).get(user=target).role == "viewer"


def test_admin_writes_but_not_above_own_role(tenant):
    admin = session_for(tenant, add_member(tenant, "admin"))
    assert invite(admin, "a1@example.com", "admin").status_code == 201
    assert_error(invite(admin, "o1@example.com", "owner"), 403, "INSUFFICIENT_PERMISSIONS")
    target = add_member(tenant, "viewer")
    assert_error(
        admin.patch(f"{URL}/{target.pk}", {"role": "owner"}, format="json"),
        403,
        "INSUFFICIENT_PERMISSIONS",
    )
    # Nor touch the owner.
    assert_error(
        admin.patch(f"{URL}/{tenant.owner.pk}", {"role": "viewer"}, format="json"),
        403,
        "INSUFFICIENT_PERMISSIONS",
    )
    assert_error(admin.delete(f"{URL}/{tenant.owner.pk}"), 403, "INSUFFICIENT_PERMISSIONS")
    response = admin.patch(
        f"{URL}/{target.pk}", {"role": "developer", "name": "Dev"}, format="json"
    )
    assert response.status_code == 200
    assert (response.json()["data"]["role"], response.json()["data"]["name"]) == (
        "developer",
        "Dev",
    )


def test_wildcard_key_acts_as_admin(tenant):
    client = tenant.client()
    assert invite(client, "viakey@example.com", "admin").status_code == 201
    assert_error(invite(client, "owner2@example.com", "owner"), 403, "INSUFFICIENT_PERMISSIONS")


def test_last_owner_cannot_be_demoted_or_removed(tenant):
    owner = tenant.session_client()
    response = owner.patch(f"{URL}/{tenant.owner.pk}", {"role": "admin"}, format="json")
    assert_error(response, 409, "CONFLICT")
    assert_error(owner.delete(f"{URL}/{tenant.owner.pk}"), 409, "CONFLICT")
    assert Membership.objects.for_organization(tenant.org).get(user=tenant.owner).role == "owner"


def test_owner_may_step_down_when_another_owner_exists(tenant):
    second = add_member(tenant, "owner")
    owner = tenant.session_client()
    response = owner.patch(f"{URL}/{tenant.owner.pk}", {"role": "admin"}, format="json")
    assert response.status_code == 200, response.content
    # The new role applies to the existing session at once.
    assert_error(
        owner.patch(f"{URL}/{second.pk}", {"role": "admin"}, format="json"),
        403,
        "INSUFFICIENT_PERMISSIONS",
    )
    # And the remaining owner is now the last one.
    other = session_for(tenant, second)
    assert_error(
        other.patch(f"{URL}/{second.pk}", {"role": "viewer"}, format="json"), 409, "CONFLICT"
    )


def test_owner_removes_another_owner(tenant):
    second = add_member(tenant, "owner")
    assert tenant.session_client().delete(f"{URL}/{second.pk}").status_code == 204


def test_removing_member_ends_their_sessions_in_that_org(tenant, other_tenant):
    user = add_member(tenant, "developer")
    add_member(other_tenant, "developer", email=user.email)
    here = session_for(tenant, user)
    there = other_tenant.session_client(user, PASSWORD)
    assert here.get("/api/v1/organization").status_code == 200  # cached

    response = tenant.session_client().delete(f"{URL}/{user.pk}")
    assert response.status_code == 204
    assert_error(here.get("/api/v1/organization"), 401, "EXPIRED_TOKEN")
    assert there.get("/api/v1/organization").status_code == 200
    assert_error(tenant.session_client().get(f"{URL}/{user.pk}"), 404, "NOT_FOUND")
    # The person still exists and can log into the other organization; not into this one.
    assert login(user.email, organization=other_tenant.org.slug).status_code == 200
    assert_error(login(user.email, organization=tenant.org.slug), 401, "INVALID_CREDENTIALS")


def test_demotion_applies_to_live_session(tenant):
    user = add_member(tenant, "admin")
    client = session_for(tenant, user)
    assert invite(client, "before@example.com").status_code == 201
    tenant.session_client().patch(f"{URL}/{user.pk}", {"role": "viewer"}, format="json")
    assert_error(invite(client, "after@example.com"), 403, "INSUFFICIENT_PERMISSIONS")


def test_list_query_count_is_constant(tenant, django_assert_max_num_queries):
    client = tenant.session_client()
    client.get(URL)  # warm the authentication cache

    def measure() -> int:
        with CaptureQueriesContext(connection) as ctx:
            response = client.get(URL)
        assert response.status_code == 200
        return len(ctx.captured_queries)

    few = measure()
    for _ in range(15):
        add_member(tenant, "viewer")
    many = measure()
    assert few == many, (few, many)
    with django_assert_max_num_queries(4):
        client.get(URL)


def test_admin_cannot_rename_a_person_of_another_organization(tenant, other_tenant):
    shared = add_member(tenant, "viewer")
    add_member(other_tenant, "viewer", email=shared.email)
    response = other_tenant.session_client().patch(
        f"{URL}/{shared.pk}", {"name": "Hijacked"}, format="json"
    )
    assert_error(response, 409, "CONFLICT")
    assert User.objects.get(pk=shared.pk).name != "Hijacked"
    # Their role there can still be changed.
    response = other_tenant.session_client().patch(
        f"{URL}/{shared.pk}", {"role": "agent"}, format="json"
    )
    assert response.status_code == 200
    # A person only in this organization can be renamed by its admins.
    solo = add_member(tenant, "viewer")
    assert (
        tenant.session_client()
        .patch(f"{URL}/{solo.pk}", {"name": "Renamed"}, format="json")
        .status_code
        == 200
    )


def test_user_self_rename_with_admin_role(tenant, other_tenant):
    user = add_member(tenant, "admin")
    add_member(other_tenant, "viewer", email=user.email)
    client = session_for(tenant, user)
    response = client.patch(f"{URL}/{user.pk}", {"name": "Me Myself"}, format="json")
    assert response.status_code == 200, response.content
    assert response.json()["data"]["name"] == "Me Myself"
