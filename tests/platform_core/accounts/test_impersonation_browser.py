"""A real browser (headless Chromium driven by Playwright) goes through the operator console:
sign in, start an impersonation, follow the link, land in the impersonated dashboard session;
following the link a second time is refused.

Chromium comes from Debian's `chromium` package (never `playwright install`). Without it the
test is skipped, unless REQUIRE_BROWSER_TESTS=1 (CI) turns the absence into a failure.
"""

from __future__ import annotations

import contextlib

from platform_core.accounts.models import ImpersonationGrant
from platform_core.audit.models import AuditLogEntry
from platform_core.identity.models import User, UserSession
from tests.browser import BROWSER_TEST, CHROMIUM_ARGS, chromium_executable
from tests.conftest import make_tenant

from .conftest import add_member

OPERATOR_PASSWORD = "Operator-Horse-4-battery"
REASON = "Ticket 1234: reproduce the customer's dashboard error"

pytestmark = BROWSER_TEST


@contextlib.contextmanager
def chromium_page():
    """A page of headless Chromium. Playwright's sync API runs an event loop in this thread
    while it is open, and Django refuses database calls from such a thread: set up data
    before opening the browser and check the database after closing it."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=chromium_executable(), args=CHROMIUM_ARGS,
        )
        try:
            page = browser.new_page()
            page.set_default_timeout(15_000)
            yield page
        finally:
            browser.close()


def test_operator_impersonates_a_member_from_the_console(transactional_db, live_server,
                                                         settings):
    # Links are built on PUBLIC_BASE_URL: point it (and the dashboard) at the live server.
    settings.PUBLIC_BASE_URL = live_server.url
    tenant = make_tenant()
    member = add_member(tenant, "developer", email="dev@example.com")
    User.objects.create_superuser("operator@example.com", OPERATOR_PASSWORD)

    org_pk, org_name = tenant.org.pk, tenant.org.name

    with chromium_page() as page:
        _impersonate_in_browser(page, live_server.url, org_pk, org_name)

    grant = ImpersonationGrant.objects.get()
    assert grant.consumed_via == "cookie"
    assert grant.user == member
    session = UserSession.objects.dangerously_unscoped().get(pk=grant.session_id)
    assert session.user == member
    exchanged = AuditLogEntry.objects.get(action="impersonation.exchanged")
    assert exchanged.metadata["reason"] == REASON


def _impersonate_in_browser(page, base: str, org_pk: str, org_name: str) -> None:
    page.goto(f"{base}/admin/login/?next=/admin/")
    page.fill("#id_username", "operator@example.com")
    page.fill("#id_password", OPERATOR_PASSWORD)
    page.click("input[type=submit]")
    page.wait_for_url(f"{base}/admin/")

    page.goto(f"{base}/admin/accounts/impersonationgrant/")
    page.click("text=Start impersonation")
    page.select_option("#id_organization", org_pk)
    page.fill("#id_user_email", "dev@example.com")
    page.fill("#id_reason", REASON)
    page.click("input[type=submit]")
    link = page.get_attribute("#impersonation-link", "href")
    assert link.startswith(f"{base}/admin/accounts/impersonationgrant/launch/#token=")

    # Follow the link: the console page posts the token to cookie-set, then navigates to
    # cookie-consume, which redirects into the dashboard with the session in the fragment
    # and sets the dashboard's session cookie.
    with page.expect_response(lambda r: "impersonate-cookie-consume" in r.url) as consumed:
        page.click("#impersonation-link")
    location = consumed.value.headers["location"]
    assert location.startswith(f"{base}/dashboard/#session=")
    session_token = location.split("#session=", 1)[1]
    # The dashboard opens signed in as the member, under the impersonation banner, and
    # drops the token from the address bar.
    page.wait_for_selector("#impersonation-banner")
    assert page.inner_text("#impersonation-reason") == REASON
    page.wait_for_function("!location.hash")
    # The impersonation cookie was cleared on the way through.
    assert not [c for c in page.context.cookies() if c["name"] == "impersonation_token"]
    # The landing page holds a working session of the member: call the API with it.
    org = page.evaluate(
        """async (token) => {
            const r = await fetch('/api/v1/organization',
                                  {headers: {Authorization: 'Bearer ' + token}});
            return {status: r.status, body: await r.json()};
        }""",
        session_token,
    )
    assert org["status"] == 200, org
    assert org["body"]["data"]["name"] == org_name

    # A second visit of the same link is refused on the console page...
    page.goto(link)
    page.wait_for_selector("#impersonation-status[data-state=refused]")
    assert "Refused" in page.inner_text("#impersonation-status")
    # ...and so is going straight to consume again.
    response = page.goto(f"{base}/api/v1/auth/impersonate-cookie-consume")
    assert response.status == 401
    assert response.json()["error"]["code"] == "INVALID_IMPERSONATION_TOKEN"
