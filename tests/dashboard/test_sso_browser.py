""""Sign in with SSO" in a real browser against a real pysaml2 identity provider.

The provider (tests/platform_core/sso/idp.py) answers at https://idp.example.test, which the
browser reaches through Playwright's routing: the AuthnRequest the browser carries there is
parsed and verified by pysaml2, and the provider's page auto-posts its signed response to
the organization's callback, as a real provider's page does.
"""

from __future__ import annotations

import html

import pytest
from django.conf import settings

from platform_core.identity.models import UserSession
from tests.browser import BROWSER_TEST
from tests.conftest import make_tenant
from tests.platform_core.sso import conftest as sso_fixtures
from tests.platform_core.sso.conftest import enable_saml
from tests.platform_core.sso.idp import TestIdP

from .conftest import consent, shot

pytestmark = [*BROWSER_TEST, pytest.mark.django_db(transaction=True)]

idp = sso_fixtures.idp  # the provider fixture of the SSO tests




def _serve_identity_provider(page, idp: TestIdP, email: str) -> None:
    def answer(route):
        request, query = idp.read_authn_request(route.request.url)
        saml_response = idp.respond(request, email)
        form = (f'<form method="post" action="{html.escape(request.assertion_consumer_service_url)}">'
                f'<input type="hidden" name="SAMLResponse" value="{saml_response}">'
                f'<input type="hidden" name="RelayState" value="{html.escape(query["RelayState"])}">'
                "</form><script>document.forms[0].submit()</script>")
        route.fulfill(status=200, content_type="text/html", body=form)

    page.route("https://idp.example.test/**", answer)


def test_sso_sign_in_lands_on_the_ticket_which_mints_the_cookie_once(
        new_context, dashboard_server, idp, monkeypatch):
    # The SP metadata the provider trusts names the server's own address.
    monkeypatch.setattr(settings, "PUBLIC_BASE_URL", dashboard_server)
    tenant = make_tenant()
    enable_saml(tenant, idp)  # as the owner, through the API (one session)
    consent(tenant.owner)
    live = UserSession.objects.dangerously_unscoped().filter(user=tenant.owner, revoked_at=None)
    before = set(live.values_list("pk", flat=True))
    page = new_context().new_page()
    _serve_identity_provider(page, idp, tenant.owner.email)
    tickets = []
    page.on("request", lambda r: tickets.append(r.url) if "/dashboard/sso?ticket=" in r.url
            else None)

    page.goto("/dashboard/signin?next=/dashboard/")
    page.fill("#sso-organization", tenant.org.slug)
    page.click("#sso-form button[type=submit]")
    page.wait_for_url(f"{dashboard_server}/dashboard/")
    assert page.locator("#organization-name").inner_text() == tenant.org.name
    shot(page, "signed-in-by-sso")

    assert len(tickets) == 1
    assert len(set(live.values_list("pk", flat=True)) - before) == 1
    # The ticket mints the cookie once: opened again (in a clean browser) it is refused.
    replay = new_context().new_page()
    answer = replay.goto(tickets[0])
    assert answer.status == 401
    assert replay.locator("[data-error-code=SSO_TICKET_INVALID]").is_visible()
    assert not [c for c in replay.context.cookies() if c["name"] == "engage_session"]


def test_sso_for_an_organization_without_saml_shows_the_refusal(new_context):
    tenant = make_tenant()
    page = new_context().new_page()
    page.goto("/dashboard/signin")
    page.fill("#sso-organization", tenant.org.slug)
    page.click("#sso-form button[type=submit]")
    assert page.locator("[data-error-code=SAML_NOT_ENABLED]").is_visible()
    assert page.url.startswith(f"{page.url.split('/dashboard')[0]}/dashboard/sso/start")
