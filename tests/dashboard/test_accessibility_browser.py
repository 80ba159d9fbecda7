"""Accessibility of every screen, checked by axe-core (the axe-playwright-python package
ships it) in headless Chromium: no critical or serious violation (missing labels, names
of buttons and links, contrast, landmarks, ARIA misuse) on a laptop and on a phone."""

from __future__ import annotations

import pytest

from contacts.models import Contact
from messaging.models import Message
from platform_core.tenancy.context import tenant_context
from tests.browser import BROWSER_TEST
from tests.conftest import make_tenant

from .conftest import off_loop
from .test_inbox_views import receive

pytestmark = [*BROWSER_TEST, pytest.mark.django_db(transaction=True)]

SCREENS = ["/dashboard/", "/dashboard/inbox/", "/dashboard/team-chat/", "/dashboard/contacts/",
           "/dashboard/contacts/segments/new", "/dashboard/contacts/import",
           "/dashboard/messaging/", "/dashboard/messaging/templates/",
           "/dashboard/messaging/broadcasts/", "/dashboard/analytics/",
           "/dashboard/developers/", "/dashboard/developers/api-keys",
           "/dashboard/developers/webhooks", "/dashboard/developers/events",
           "/dashboard/settings/", "/dashboard/settings/members", "/dashboard/settings/sso"]


def _serious(page) -> list[str]:
    from axe_playwright_python.sync_playwright import Axe

    results = Axe().run(page)
    return [f"{v['id']} ({v['impact']}): {v['help']} at "
            f"{[n['target'] for n in v['nodes']][:3]}"
            for v in results.response["violations"] if v["impact"] in ("critical", "serious")]


@pytest.mark.parametrize("viewport", [{"width": 1280, "height": 860},
                                      {"width": 390, "height": 844}], ids=["laptop", "phone"])
def test_every_screen_passes_axe(page_as, new_context, viewport):
    tenant = make_tenant()
    # Screens with something in them: a conversation, its contact and message.
    inbound = off_loop(receive, tenant, "Where is my order?")
    with tenant_context(tenant.org):
        contact = Contact.objects.get()
        message = Message.objects.get(pk=inbound["id"])
    page = page_as(tenant.owner, tenant.org, viewport=viewport)
    problems = {}
    for path in [*SCREENS, f"/dashboard/inbox/{inbound['conversation_id']}",
                 f"/dashboard/contacts/{contact.pk}", f"/dashboard/messaging/{message.pk}"]:
        page.goto(path)
        page.wait_for_load_state("networkidle")
        found = _serious(page)
        if found:
            problems[path] = found
    # The signed-out pages too.
    signed_out = new_context(viewport=viewport).new_page()
    for path in ["/dashboard/signin", "/dashboard/forgot-password"]:
        signed_out.goto(path)
        found = _serious(signed_out)
        if found:
            problems[path] = found
    assert problems == {}
