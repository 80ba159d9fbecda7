"""The settings screens in a real browser against daphne: rename the organization, invite a
member and change their role, set up SAML (the metadata URL shown and served, the
connection test answering both ways, enabling) and SCIM (token shown once)."""

from __future__ import annotations

import httpx
import pytest

from platform_core.identity.models import User
from platform_core.sso import saml
from platform_core.sso.models import SamlConfig
from platform_core.tenancy.context import tenant_context
from platform_core.tenancy.models import Membership, Organization
from tests.browser import BROWSER_TEST
from tests.conftest import make_tenant

from .conftest import shot

pytestmark = [*BROWSER_TEST, pytest.mark.django_db(transaction=True)]


def test_owner_changes_the_organizations_name_and_time_zone(page_as):
    tenant = make_tenant()
    page = page_as(tenant.owner, tenant.org, "/dashboard/settings/")
    page.fill("#org-name", "Acme Support")
    page.fill("#org-timezone", "Europe/Paris")
    page.click("#org-form button[type=submit]")
    page.get_by_text("Organization settings saved.").wait_for()
    assert page.locator("#organization-name").inner_text() == "Acme Support"
    assert page.locator("#org-timezone").input_value() == "Europe/Paris"
    org = Organization.objects.get(pk=tenant.org.pk)
    assert (org.name, org.timezone) == ("Acme Support", "Europe/Paris")
    shot(page, "settings-org")
    # A refused value is shown above the form, which keeps what was typed.
    page.fill("#org-timezone", "Mars/Olympus")
    page.click("#org-form button[type=submit]")
    error = page.locator("#flash [data-error-code=VALIDATION_ERROR]")
    error.wait_for()
    assert "Unknown IANA time zone" in error.inner_text()
    assert page.locator("#org-timezone").input_value() == "Mars/Olympus"
    assert Organization.objects.get(pk=tenant.org.pk).timezone == "Europe/Paris"


def test_admin_invites_a_member_then_changes_their_role(page_as):
    tenant = make_tenant()
    page = page_as(tenant.owner, tenant.org, "/dashboard/settings/members")
    page.fill("#invite-email", "grace@example.com")
    page.fill("#invite-name", "Grace Hopper")
    page.select_option("#invite-role", "agent")
    page.click("#invite-form button[type=submit]")
    row = page.locator("#member-list tr[data-email='grace@example.com']")
    row.wait_for()
    assert "Grace Hopper" in row.inner_text()
    assert page.locator("#invite-email").input_value() == ""  # the form was reset
    grace = User.objects.get(email="grace@example.com")
    row.locator("select").select_option("developer")
    row.get_by_role("button", name="Change role").click()
    page.get_by_text("grace@example.com is now developer.").wait_for()
    with tenant_context(tenant.org):
        assert Membership.objects.get(user=grace).role == "developer"
    shot(page, "settings-members")
    # The last owner keeps their role: the owner's own row offers no control.
    own = page.locator(f"#member-list tr[data-user-id='{tenant.owner.pk}']")
    assert own.locator("select").count() == 0


def test_saml_setup_shows_the_metadata_url_and_the_connection_test_answers(
        page_as, dashboard_server):
    tenant = make_tenant()
    page = page_as(tenant.owner, tenant.org, "/dashboard/settings/sso")
    metadata_url = page.locator("#saml-metadata-url").inner_text()
    # The server's own address: the URL the identity provider is given.
    assert metadata_url == f"{dashboard_server}/auth/saml/{tenant.org.slug}/metadata"
    assert page.locator("#saml-acs-url").inner_text().endswith(
        f"/auth/saml/{tenant.org.slug}/callback")
    # The URL serves this organization's SP metadata.
    response = httpx.get(metadata_url, timeout=30)
    assert response.status_code == 200
    assert "EntityDescriptor" in response.text

    page.fill("#idp-sso-url", "https://idp.example.com/sso")
    page.fill("#idp-entity-id", "https://idp.example.com/metadata")
    page.fill("#idp-cert", "not a certificate")
    page.click("#saml-test")
    page.locator("#saml-test-failed").wait_for()
    assert "idp_x509_cert" in page.locator("#saml-test-failed").inner_text()

    _key, certificate = saml.generate_keypair("Test IdP")
    page.fill("#idp-cert", certificate)
    page.click("#saml-test")
    page.locator("#saml-test-passed").wait_for()
    page.check("#saml-enabled")
    page.click("#saml-form button[type=submit]")
    page.get_by_text("single sign-on is on.").wait_for()
    assert page.locator("#saml-status").inner_text() == "enabled"
    with tenant_context(tenant.org):
        config = SamlConfig.objects.get()
    assert config.enabled
    assert config.idp_sso_url == "https://idp.example.com/sso"

    page.click("#scim-generate")
    token = page.locator("#scim-token").input_value()
    assert token.startswith("scim_")
    assert page.locator("#scim-status").inner_text() == "enabled"
    page.click("#saml-test")  # the saved settings pass too
    page.locator("#saml-test-passed").wait_for()
    shot(page, "settings-sso")
    page.reload()
    assert page.locator("#scim-token").count() == 0
    assert token not in page.content()
