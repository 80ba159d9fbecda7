"""Signing in to the dashboard in a real browser: password (consent on first visit), a
wrong password, sign-out, the organization switcher."""

from __future__ import annotations

import pytest

from platform_core.accounts.models import ConsentRecord
from platform_core.identity.models import UserSession
from tests.browser import BROWSER_TEST
from tests.conftest import make_tenant
from tests.platform_core.accounts.conftest import PASSWORD, add_member

from .conftest import shot

pytestmark = [*BROWSER_TEST, pytest.mark.django_db(transaction=True)]


def test_password_sign_in_asks_consent_once_then_lands_on_the_dashboard(new_context):
    tenant = make_tenant()
    member = add_member(tenant, "agent", email="agent@example.com")
    page = new_context().new_page()

    page.goto("/dashboard/")
    page.wait_for_url("**/dashboard/signin?next=*")
    shot(page, "signin")
    page.fill("#email", "agent@example.com")
    page.fill("#password", PASSWORD)
    page.click("#signin-form button[type=submit]")
    page.wait_for_url("**/dashboard/consent?next=*")
    shot(page, "consent")
    page.check("input[name=accept]")
    page.click("#consent-form button[type=submit]")
    page.wait_for_url("**/dashboard/")

    cookie = next(c for c in page.context.cookies() if c["name"] == "engage_session")
    assert cookie["httpOnly"]
    assert cookie["sameSite"] == "Lax"
    record = ConsentRecord.objects.get(user=member)
    assert record.ip_address == "127.0.0.1"
    assert UserSession.objects.dangerously_unscoped().filter(user=member, revoked_at=None).count() == 1


def test_wrong_password_is_refused_and_sign_out_ends_the_session(new_context, page_as):
    tenant = make_tenant()
    add_member(tenant, "viewer", email="viewer@example.com")
    page = new_context().new_page()
    page.goto("/dashboard/signin")
    page.fill("#email", "viewer@example.com")
    page.fill("#password", "not-the-password")
    page.click("#signin-form button[type=submit]")
    assert page.locator("[data-error-code=INVALID_CREDENTIALS]").is_visible()
    assert not [c for c in page.context.cookies() if c["name"] == "engage_session"]

    page = page_as(tenant.owner, tenant.org)
    assert page.locator("#organization-name").inner_text() == tenant.org.name
    shot(page, "home")
    page.click("text=Sign out")
    page.wait_for_url("**/dashboard/signin")
    assert UserSession.objects.dangerously_unscoped().filter(
        user=tenant.owner, revoked_at=None).count() == 0
    page.goto("/dashboard/")
    page.wait_for_url("**/dashboard/signin?next=*")


def test_member_of_two_organizations_switches_between_them(page_as):
    first, second = make_tenant(), make_tenant()
    add_member(second, "admin", email=first.owner.email, password=PASSWORD)
    page = page_as(first.owner, first.org)
    assert page.locator("#organization-switch").input_value() == first.org.slug
    page.select_option("#organization-switch", second.org.slug)
    page.wait_for_function(
        f"document.querySelector('#organization-switch').value === '{second.org.slug}'")
    assert "admin" in page.locator(".who").inner_text()
    shot(page, "org-switcher")
    live = UserSession.objects.dangerously_unscoped().filter(user=first.owner, revoked_at=None)
    assert [s.organization_id for s in live] == [second.org.pk]
