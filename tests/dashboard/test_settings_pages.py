"""The settings screens through Django's test client: who may look and change (the API's
scopes and roles), the identity rules on members (no role above your own, an owner kept,
nobody removes themselves), the organization's validation, SAML owner-only, SCIM token
shown once."""

from __future__ import annotations

import pytest

from platform_core.sso import saml
from platform_core.sso.models import SamlConfig, ScimConfig
from platform_core.tenancy.context import tenant_context
from platform_core.tenancy.models import Membership, Organization
from tests.conftest import make_tenant
from tests.platform_core.accounts.conftest import add_member

from .conftest import client_as
from .test_developers_pages import HTMX

pytestmark = pytest.mark.django_db


def _role(org, user) -> str | None:
    with tenant_context(org):
        membership = Membership.objects.filter(user=user).first()
    return membership.role if membership else None


@pytest.mark.parametrize("role", ["developer", "viewer"])
def test_non_admins_see_no_member_controls_and_their_writes_are_refused(role):
    tenant = make_tenant()
    member = add_member(tenant, role)
    client = client_as(member, tenant.org)
    # The organization is readable by every member (as GET /api/v1/organization), no form.
    page = client.get("/dashboard/settings/")
    assert page.status_code == 200
    assert b'id="org-facts"' in page.content
    assert b'id="org-form"' not in page.content
    assert b"/dashboard/settings/members" not in page.content  # no members tab
    assert b"/dashboard/settings/sso" not in page.content
    # Members need users:read, which only owners and admins hold.
    assert client.get("/dashboard/settings/members").status_code == 403
    for path, body in [
        ("/dashboard/settings/members", {"email": "x@example.com", "role": "viewer"}),
        (f"/dashboard/settings/members/{tenant.owner.pk}/role", {"role": "viewer"}),
        (f"/dashboard/settings/members/{tenant.owner.pk}/remove", {}),
        ("/dashboard/settings/", {"name": "Taken over"}),
        ("/dashboard/settings/sso/saml", {"idp_sso_url": "https://idp.example.com"}),
        ("/dashboard/settings/sso/scim/token", {}),
    ]:
        assert client.post(path, body).status_code == 403, path
    assert _role(tenant.org, tenant.owner) == "owner"
    assert Organization.objects.get(pk=tenant.org.pk).name == tenant.org.name
    with tenant_context(tenant.org):
        assert not ScimConfig.objects.exists()


def test_admin_invites_changes_roles_but_never_above_their_own():
    tenant = make_tenant()
    admin = add_member(tenant, "admin")
    client = client_as(admin, tenant.org)
    page = client.get("/dashboard/settings/members")
    assert b'id="invite-form"' in page.content
    assert b'<option value="owner"' not in page.content  # not offered above their role
    response = client.post("/dashboard/settings/members",
                           {"email": "New.Person@Example.com", "name": "New", "role": "agent"},
                           **HTMX)
    assert response.status_code == 200
    assert b"new.person@example.com added as agent" in response.content
    from platform_core.identity.models import User

    person = User.objects.get(email="new.person@example.com")
    assert _role(tenant.org, person) == "agent"
    # Above their own role: the service's 403, as on the API.
    response = client.post("/dashboard/settings/members",
                           {"email": "boss@example.com", "role": "owner"}, **HTMX)
    assert response.status_code == 403
    assert client.post(f"/dashboard/settings/members/{person.pk}/role", {"role": "owner"},
                       **HTMX).status_code == 403
    assert client.post(f"/dashboard/settings/members/{tenant.owner.pk}/role",
                       {"role": "viewer"}, **HTMX).status_code == 403
    assert client.post(f"/dashboard/settings/members/{person.pk}/role", {"role": "developer"},
                       **HTMX).status_code == 200
    assert _role(tenant.org, person) == "developer"
    # Already a member, bad email, nobody removes themselves.
    assert client.post("/dashboard/settings/members", {"email": person.email, "role": "viewer"},
                       **HTMX).status_code == 409
    assert client.post("/dashboard/settings/members", {"email": "nope", "role": "viewer"},
                       **HTMX).status_code == 422
    assert client.post(f"/dashboard/settings/members/{admin.pk}/remove",
                       **HTMX).status_code == 409
    assert client.post(f"/dashboard/settings/members/{person.pk}/remove",
                       **HTMX).status_code == 200
    assert _role(tenant.org, person) is None


def test_the_last_owner_is_kept():
    tenant = make_tenant()
    second = add_member(tenant, "owner")
    client = client_as(second, tenant.org)
    assert client.post(f"/dashboard/settings/members/{tenant.owner.pk}/role",
                       {"role": "admin"}, **HTMX).status_code == 200
    # The remaining owner cannot step down or be removed by anyone.
    solo = client_as(tenant.owner, tenant.org)
    assert solo.post(f"/dashboard/settings/members/{second.pk}/role", {"role": "admin"},
                     **HTMX).status_code == 403  # an admin now: cannot change a higher role
    response = client.post(f"/dashboard/settings/members/{tenant.owner.pk}/remove", **HTMX)
    assert response.status_code == 200
    other = add_member(tenant, "owner", email="other-owner@example.com")
    client_as(other, tenant.org).post(f"/dashboard/settings/members/{second.pk}/remove", **HTMX)
    response = client_as(other, tenant.org).post(
        f"/dashboard/settings/members/{other.pk}/role", {"role": "admin"}, **HTMX)
    assert response.status_code == 409
    assert b"at least one owner" in response.content
    assert _role(tenant.org, other) == "owner"


def test_organization_update_validates_like_the_api():
    tenant = make_tenant()
    client = client_as(tenant.owner, tenant.org)
    response = client.post("/dashboard/settings/", {
        "name": "Renamed", "timezone": "Europe/Paris", "currency": "eur",
        "default_country": "fr"})
    assert response.status_code == 302
    org = Organization.objects.get(pk=tenant.org.pk)
    assert (org.name, org.timezone, org.currency, org.default_country, org.sandbox) == (
        "Renamed", "Europe/Paris", "EUR", "FR", False)
    response = client.post("/dashboard/settings/", {
        "name": "X", "timezone": "Mars/Olympus", "currency": "EUR", "default_country": "FR"},
        **HTMX)
    assert response.status_code == 422
    assert b"Unknown IANA time zone" in response.content
    assert Organization.objects.get(pk=tenant.org.pk).name == "Renamed"


def test_saml_is_owner_only_and_the_connection_test_reports_issues():
    tenant = make_tenant()
    admin = client_as(add_member(tenant, "admin"), tenant.org)
    page = admin.get("/dashboard/settings/sso")
    assert page.status_code == 200
    assert f"/auth/saml/{tenant.org.slug}/metadata".encode() in page.content
    assert f"/auth/saml/{tenant.org.slug}/callback".encode() in page.content
    assert b'id="saml-enabled"' not in page.content  # admins look, owners change
    assert admin.post("/dashboard/settings/sso/saml",
                      {"idp_sso_url": "https://idp.example.com/sso"}).status_code == 403
    response = admin.post("/dashboard/settings/sso/saml/test", {
        "idp_sso_url": "not a url", "idp_entity_id": "", "idp_x509_cert": "garbage"}, **HTMX)
    assert response.status_code == 200
    assert b"saml-test-failed" in response.content
    assert b"idp_entity_id" in response.content
    assert b"idp_sso_url" in response.content

    _key, cert = saml.generate_keypair("Test IdP")
    owner = client_as(tenant.owner, tenant.org)
    fields = {"idp_sso_url": "https://idp.example.com/sso",
              "idp_entity_id": "https://idp.example.com", "idp_x509_cert": cert}
    response = owner.post("/dashboard/settings/sso/saml/test", fields, **HTMX)
    assert b"saml-test-passed" in response.content
    # Enabling with a broken certificate is refused by the service's own test.
    response = owner.post("/dashboard/settings/sso/saml",
                          {**fields, "idp_x509_cert": "garbage", "enabled": "on"}, **HTMX)
    assert response.status_code == 422
    # The same refusal from a plain form post: back to the page, the error as a message.
    response = owner.post("/dashboard/settings/sso/saml",
                          {**fields, "idp_entity_id": "", "enabled": "on"}, follow=True)
    assert response.redirect_chain == [("/dashboard/settings/sso", 302)]
    assert b"SAML_CONNECTION_TEST_FAILED" in response.content
    assert b"The IdP entity id is required." in response.content
    response = owner.post("/dashboard/settings/sso/saml", {**fields, "enabled": "on"})
    assert response.status_code == 302
    with tenant_context(tenant.org):
        config = SamlConfig.objects.get()
    assert config.enabled
    assert config.idp_sso_url == "https://idp.example.com/sso"


def test_scim_token_is_shown_once_then_only_its_last_four():
    tenant = make_tenant()
    client = client_as(add_member(tenant, "admin"), tenant.org)
    response = client.post("/dashboard/settings/sso/scim/token", **HTMX)
    assert response.status_code == 200
    assert response["Cache-Control"] == "no-store"
    token = response.content.split(b'id="scim-token" class="secret wide" readonly value="')[1]
    token = token.split(b'"')[0].decode()
    assert token.startswith("scim_")
    page = client.get("/dashboard/settings/sso").content
    assert token.encode() not in page
    assert f"scim_…{token[-4:]}".encode() in page
    assert f"/scim/v2/{tenant.org.slug}".encode() in page
    response = client.post("/dashboard/settings/sso/scim", {"enabled": "0"}, **HTMX)
    assert response.status_code == 200
    assert b"SCIM turned off" in response.content
    with tenant_context(tenant.org):
        assert not ScimConfig.objects.get().enabled


def test_settings_pages_query_counts(django_assert_max_num_queries):
    tenant = make_tenant()
    for n in range(6):
        add_member(tenant, "agent", email=f"agent{n}@example.com")
    client = client_as(tenant.owner, tenant.org)
    for path in ("/dashboard/settings/", "/dashboard/settings/members",
                 "/dashboard/settings/sso"):
        with django_assert_max_num_queries(8):
            assert client.get(path).status_code == 200, path
