"""The inbox in real browsers against daphne: a reply sent in one signed-in browser shows
up in another one's open thread and list without a reload (through the messaging
pipeline in test mode and the /ws/dashboard live feed), a viewer's read-only screen, the
filters, the thread actions, the 24-hour window hint and the co-browse join.

Two tests only: each transactional test ends with a flush of every table (seconds)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import RequestFactory
from django.utils import timezone

from conversations import cobrowse
from conversations.models import Conversation
from messaging.models import Message
from platform_core.identity.principal import Principal
from platform_core.tenancy.context import tenant_context
from tests.browser import BROWSER_TEST
from tests.conftest import make_tenant
from tests.platform_core.accounts.conftest import add_member

from .conftest import off_loop, shot
from .test_inbox_views import receive as receive_here

pytestmark = [*BROWSER_TEST, pytest.mark.django_db(transaction=True)]

LIVE = "body[data-live-ready]"



def receive(tenant, body: str, **options) -> dict:
    return off_loop(receive_here, tenant, body, **options)


def visitor_asks_to_cobrowse(tenant, cid: str):
    """The visitor's widget starts a session (the service behind POST /widget/cobrowse)."""
    widget = Principal(kind="api_key", organization=tenant.org, role="viewer", key_id="pk_test")
    request = RequestFactory().post("/api/v1/widget/cobrowse")
    with tenant_context(tenant.org):
        session, grant, _created = cobrowse.widget_start(
            principal=widget, conversation_id=cid, visitor_id="visitor-1", control=True,
            request=request)
    return session, grant["token"]


def open_inbox(page_as, user, org, path: str = "/dashboard/inbox/", **options):
    page = page_as(user, org, path, **options)
    page.wait_for_selector(LIVE)  # the live socket joined the organization's feed
    return page


def row(tenant, cid: str) -> Conversation:
    return Conversation.objects.for_organization(tenant.org).get(pk=cid)


def test_a_reply_arrives_in_another_signed_in_browser_without_reload(page_as):
    tenant = make_tenant()
    agent = add_member(tenant, "agent", email="second-agent@example.com")
    viewer = add_member(tenant, "viewer", email="read-only@example.com")
    cid = receive(tenant, "My parcel never arrived", sender="+14155550140")["conversation_id"]
    receive(tenant, "Do you ship to Canada?", sender="+14155550141")

    sender = open_inbox(page_as, tenant.owner, tenant.org, f"/dashboard/inbox/{cid}")
    watcher = open_inbox(page_as, agent, tenant.org, f"/dashboard/inbox/{cid}")
    watcher.evaluate("window.__notReloaded = true")
    # A viewer, on a phone, reads the same thread live but gets no write control.
    reader = open_inbox(page_as, viewer, tenant.org, f"/dashboard/inbox/{cid}",
                        viewport={"width": 390, "height": 844})
    assert reader.locator("#read-only-note").is_visible()
    for control in ("#reply-form", "#thread-actions", "#action-close", "#assign-agent"):
        assert reader.locator(control).count() == 0, control
    assert watcher.locator("#thread-messages").get_by_text("My parcel never arrived").is_visible()

    sender.select_option("#reply-channel", "sms")
    sender.fill("#reply-body", "Sorry about that, a new one is on its way.")
    sender.click("#reply-send")
    sender.locator("#thread-messages .message.outbound").get_by_text(
        "Sorry about that, a new one is on its way.").wait_for()

    # The other browser's open thread and list show it, pushed over /ws/dashboard.
    arrived = watcher.locator("#thread-messages .message.outbound")
    arrived.get_by_text("Sorry about that, a new one is on its way.").wait_for()
    watcher.locator(f"#conversation-rows [data-conversation={cid}]").get_by_text(
        "Sent: Sorry about that").wait_for()
    # Stored and sent through the messaging pipeline (sandbox provider, test mode); the
    # delivery receipt reaches the watcher's thread live too.
    [message] = Message.objects.for_organization(tenant.org).filter(
        conversation_id=cid, direction="outbound")
    assert message.provider == "sandbox"
    assert message.to == "+14155550140"
    assert message.metadata.get("sent_by") == tenant.owner.pk
    watcher.wait_for_selector(f"[data-message={message.pk}] .badge.status-delivered")
    message.refresh_from_db()
    assert message.status == "delivered"

    # The contact answers: both browsers see the inbound message arrive.
    receive(tenant, "Thanks, that was quick!", sender="+14155550140")
    for page in (sender, watcher, reader):
        page.locator("#thread-messages .message.inbound").get_by_text(
            "Thanks, that was quick!").wait_for()
    assert watcher.evaluate("window.__notReloaded") is True
    shot(sender, "inbox-thread")
    shot(reader, "inbox-thread-phone")


def test_filters_thread_actions_window_hint_and_cobrowse(page_as):
    tenant = make_tenant()
    agent = add_member(tenant, "agent", email="triage@example.com")
    sms = receive(tenant, "Refund please", sender="+14155550150")["conversation_id"]
    chat = receive(tenant, "Hi from WhatsApp", sender="+14155550151",
                   channel="whatsapp")["conversation_id"]
    receive(tenant, "Opening hours?", sender="+14155550152")
    # The WhatsApp contact last wrote 25 hours ago: only templates can go out.
    Message.objects.for_organization(tenant.org).filter(conversation_id=chat).update(
        created_at=timezone.now() - timedelta(hours=25))
    page = open_inbox(page_as, tenant.owner, tenant.org)
    rows = page.locator("#conversation-rows .conversation-row")
    assert rows.count() == 3

    page.select_option("#filter-channel", "whatsapp")
    page.wait_for_function("document.querySelectorAll('#conversation-rows .conversation-row')"
                           ".length === 1")
    assert rows.first.get_attribute("data-conversation") == chat
    page.click(f"#conversation-rows [data-conversation={chat}] a")
    page.wait_for_selector("#window-hint[data-window=closed]")
    page.wait_for_url(f"**/dashboard/inbox/{chat}")
    # Replying on SMS instead has no window.
    page.select_option("#reply-channel", "sms")
    page.wait_for_selector("#window-hint", state="detached")

    page.select_option("#filter-channel", "")
    page.fill("#filter-search", "Refund")
    page.wait_for_function("document.querySelectorAll('#conversation-rows .conversation-row')"
                           ".length === 1")
    page.click(f"#conversation-rows [data-conversation={sms}] a")
    page.wait_for_selector(f"#thread [data-conversation={sms}]")

    page.select_option("#assign-agent", agent.pk)
    page.click("#action-assign")
    page.wait_for_function("document.querySelector('#state-assignee').textContent"
                           ".includes('triage@example.com')")
    page.select_option("#set-priority", "urgent")
    page.click("#action-priority")
    page.wait_for_function("document.querySelector('#state-priority').textContent"
                           ".trim() === 'urgent'")
    page.fill("#set-tags", "refund, vip")
    page.click("#action-tags")
    page.locator("#state-tags").get_by_text("#vip").wait_for()
    # The list follows (HX-Trigger and the live event).
    page.locator(f"#conversation-rows [data-conversation={sms}]").get_by_text("urgent").wait_for()
    conversation = row(tenant, sms)
    assert (conversation.assignee_id, conversation.priority, conversation.tags) == (
        agent.pk, "urgent", ["refund", "vip"])
    page.fill("#filter-search", "")
    page.select_option("#filter-assignee", agent.pk)
    page.wait_for_function("document.querySelectorAll('#conversation-rows .conversation-row')"
                           ".length === 1")
    shot(page, "inbox-list")

    page.select_option("#snooze-until", index=1)
    page.click("#action-snooze")
    page.wait_for_selector("#state-status:text-is('snoozed')")
    assert row(tenant, sms).status == "snoozed"
    page.click("#action-close")
    page.wait_for_selector("#state-status:text-is('closed')")
    assert row(tenant, sms).status == "closed"
    # A refused write is shown, not swallowed: replying to a closed thread.
    page.fill("#reply-body", "Anything else?")
    page.click("#reply-send")
    page.wait_for_selector("#flash [data-error-code=CONVERSATION_NOT_OPEN]")
    page.click("#action-reopen")
    page.wait_for_selector("#state-status:text-is('open')")
    assert row(tenant, sms).status == "open"

    join_cobrowse(page, tenant, sms)


def join_cobrowse(page, tenant, cid: str) -> None:
    """The visitor asked to co-browse: the agent joins from the thread and sees its events."""
    session, visitor_token = off_loop(visitor_asks_to_cobrowse, tenant, cid)
    # The request reaches the open thread live (cobrowse.requested): the Join button shows.
    page.wait_for_selector("#cobrowse-join")
    page.check("#cobrowse input[name=control]")
    page.click("#cobrowse-join")
    page.wait_for_selector("#cobrowse-state[data-state=connected]")
    session.refresh_from_db()
    assert session.status == "active"
    assert session.agent_user_id == tenant.owner.pk

    # The visitor's widget (its relay token) sends a page event; the agent sees it.
    ws_url = page.locator("#cobrowse [data-ws-url]").get_attribute("data-ws-url")
    page.evaluate("""([url, token]) => new Promise((resolve, reject) => {
        const ws = new WebSocket(url + "?token=" + encodeURIComponent(token));
        ws.onopen = () => { ws.send(JSON.stringify({type: "navigate", url: "/checkout"}));
                            resolve(true); };
        ws.onerror = reject;
        window.__visitor = ws;
    })""", [ws_url, visitor_token])
    page.locator("#cobrowse-events").get_by_text("visitor: navigate /checkout").wait_for()
    page.click("#cobrowse-end")
    page.wait_for_selector("#cobrowse-ended")
    session.refresh_from_db()
    assert session.status == "ended"
