"""The messaging screens in a real browser: send through the form and read the log with
each message's status, open one and see its status events; the templates' approval
states and a test-mode approval; a broadcast started from the form and the progress bar
of a running one moving by itself."""

from __future__ import annotations

import pytest

from contacts import services as contacts
from messaging.broadcasts.models import Broadcast
from messaging.models import Message
from messaging.status import message_apply_status
from platform_core.identity.principal import Principal
from platform_core.tenancy.context import tenant_context
from templates import services as templates
from tests.browser import BROWSER_TEST
from tests.conftest import make_tenant
from tests.platform_core.accounts.conftest import add_member

from .conftest import off_loop, shot

pytestmark = [*BROWSER_TEST, pytest.mark.django_db(transaction=True)]

USER = "+14155550123"
FAIL = "+15005550009"
NO_RECEIPT = "+15005550010"


def send_from_the_form(page, to: str, body: str) -> None:
    page.goto("/dashboard/messaging/")
    if not page.locator("#send-form").is_visible():
        page.click("#send-panel summary")
    page.select_option("#send-channel", "sms")
    page.fill("#send-to", to)
    page.fill("#send-body", body)
    page.click("#send-form button[type=submit]")
    page.wait_for_url("**/dashboard/messaging/msg_*")


def test_send_then_the_log_shows_statuses_and_the_detail_its_events(page_as):
    tenant = make_tenant()
    page = page_as(tenant.owner, tenant.org, "/dashboard/messaging/")
    assert page.locator("#sandbox-hint").is_visible() is False  # inside the closed panel
    send_from_the_form(page, FAIL, "This one bounces")
    send_from_the_form(page, USER, "Your order shipped")
    # The sandbox carrier delivers; the status region follows the live events.
    page.wait_for_selector("#message-status-badge[data-status=delivered]")

    page.goto("/dashboard/messaging/")
    with tenant_context(tenant.org):
        delivered = Message.objects.get(to=USER)
        failed = Message.objects.get(to=FAIL)
    rows = page.locator("#message-table tbody tr")
    assert rows.count() == 2
    assert rows.nth(0).get_attribute("data-message-id") == delivered.pk  # newest first
    assert page.locator(f"tr[data-message-id={delivered.pk}] .badge").inner_text() == "delivered"
    assert page.locator(f"tr[data-message-id={failed.pk}] .badge").inner_text() == "failed"
    assert "30003" in page.locator(f"tr[data-message-id={failed.pk}]").inner_text()
    shot(page, "messaging-log")
    page.set_viewport_size({"width": 390, "height": 844})  # a phone: the table scrolls
    assert page.locator("#log-filters").is_visible()
    shot(page, "messaging-log-phone")
    page.set_viewport_size({"width": 1280, "height": 860})

    page.select_option("#f-status", "failed")
    page.click("#log-filters button[type=submit]")
    page.wait_for_url("**/dashboard/messaging/?*status=failed*")
    assert page.locator("#message-table tbody tr").count() == 1

    page.goto("/dashboard/messaging/")
    page.click(f"a[href='/dashboard/messaging/{delivered.pk}']")
    page.wait_for_selector("#message-events")
    types = page.locator("#message-events tbody tr").evaluate_all(
        "rows => rows.map(r => r.dataset.eventType)")
    assert types == ["message.queued", "message.sent", "message.delivered"]
    steps = page.locator("#message-timeline li").evaluate_all(
        "items => items.map(i => i.dataset.step)")
    assert steps == ["created", "sent", "delivered"]
    assert page.locator("#message-body").inner_text() == "Your order shipped"
    shot(page, "messaging-detail")


def deliver(org) -> None:
    with tenant_context(org):
        message_apply_status(message=Message.objects.get(), status="delivered")



def test_the_detail_follows_a_late_delivery_receipt_live(page_as):
    tenant = make_tenant()
    page = page_as(tenant.owner, tenant.org, "/dashboard/messaging/")
    send_from_the_form(page, NO_RECEIPT, "Waiting for the carrier")
    assert page.locator("#message-status-badge").get_attribute("data-status") == "sent"
    page.wait_for_selector("body[data-live-ready]")
    off_loop(deliver, tenant.org)
    # No reload: the status region refreshes on this message's live event.
    page.wait_for_selector("#message-status-badge[data-status=delivered]")
    assert page.locator("tr[data-event-type='message.delivered']").count() == 1


def test_templates_show_their_approval_state_and_a_test_mode_approval(page_as):
    tenant = make_tenant()
    owner = add_member(tenant, "admin")
    principal = Principal(kind="session", organization=tenant.org, role="owner",
                          user_id=tenant.owner.pk)
    with tenant_context(tenant.org):
        pending = templates.template_create(principal=principal, name="order_ready",
                                            channel="whatsapp", language="en",
                                            content="Order {{1}} is ready")
        templates.template_create(principal=principal, name="order_ready", channel="sms",
                                  language="en", content="Order {{1}} is ready")
        rejected = templates.template_create(principal=principal, name="promo", channel="rcs",
                                             language="en", content="Sale today")
        templates.template_sandbox_decide(principal=principal, template=rejected,
                                          decision="rejected", reason="Promotional wording")
    page = page_as(owner, tenant.org, "/dashboard/messaging/templates/")
    def badge(channel: str) -> str:
        return page.locator(f"#template-table tr[data-channel={channel}] .badge").inner_text()

    assert badge("whatsapp") == "pending"
    assert badge("sms") == "approved"
    assert badge("rcs") == "rejected"
    assert "Promotional wording" in page.locator("#template-table tr[data-channel=rcs]").inner_text()
    summary = page.locator("#template-summary tr[data-channel=whatsapp] td")
    assert summary.nth(0).inner_text() == "1"  # pending column
    shot(page, "messaging-templates")

    page.locator(f"tr[data-template-id={pending.pk}] button[value=approved]").click()
    page.wait_for_selector(".flash.success")
    assert badge("whatsapp") == "approved"


def test_a_broadcast_from_the_form_and_a_running_ones_progress(page_as):
    tenant = make_tenant()
    with tenant_context(tenant.org):
        vips = contacts.list_create(organization=tenant.org, principal=None, name="VIPs")
        ids = [contacts.contact_create(organization=tenant.org, principal=None,
                                       first_name=f"C{i}", phone=f"+1415555020{i}").pk
               for i in range(3)]
        contacts.list_members_bulk_add(contact_list=vips, contact_ids=ids, principal=None)
        running = Broadcast.objects.create(
            organization=tenant.org, name="Running sale", channel="sms", body="hi",
            list_id=vips.pk, status="running", total_recipients=200, queued=50, sent=50,
            delivered=40, failed=2)
    page = page_as(tenant.owner, tenant.org, "/dashboard/messaging/broadcasts/")
    row = page.locator(f"#broadcast-{running.pk}")
    assert row.locator("[data-percent]").get_attribute("data-percent") == "25.0"

    page.click("#create-broadcast summary")
    page.fill("#b-name", "Welcome VIPs")
    page.select_option("#b-channel", "sms")
    page.select_option("#b-audience", f"list:{vips.pk}")
    page.fill("#b-body", "Hello {{contact.first_name | there}}")
    page.click("#broadcast-form button[type=submit]")
    page.wait_for_selector(".flash.success")
    with tenant_context(tenant.org):
        created = Broadcast.objects.get(name="Welcome VIPs")
        assert Message.objects.filter(campaign_id=created.pk).count() == 3
    created_row = page.locator(f"#broadcast-{created.pk}")
    # The runner finished within the request or its row polls until it has.
    page.wait_for_selector(f"#broadcast-{created.pk}[data-status=completed]")
    assert created_row.locator("[data-counter=total_recipients]").inner_text() == "3"

    # The running broadcast moves on; its row polls and shows it without a reload.
    with tenant_context(tenant.org):
        Broadcast.objects.filter(pk=running.pk).update(queued=150, sent=140, delivered=120)
    page.wait_for_selector(f"#broadcast-{running.pk} [data-percent='75.0']")
    assert row.locator("[data-counter=delivered]").inner_text() == "120"
    assert row.locator("progress").get_attribute("value") == "75.0"
    shot(page, "messaging-broadcasts")
