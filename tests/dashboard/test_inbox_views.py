"""The inbox screens through the Django test client: the API's filters and cursor pages,
a fixed number of queries per list page, the thread, the writes through the
conversations services, the 24-hour window hint, and the role checks (a viewer reads but
every write answers 403)."""

from __future__ import annotations

import re
from datetime import timedelta
from urllib.parse import unquote

import pytest
from django.utils import timezone

from conversations.models import Conversation
from conversations.side_models import CobrowseSession
from messaging.models import Message
from platform_core.tenancy.context import tenant_context
from templates.models import MessageTemplate
from tests.conftest import make_tenant
from tests.platform_core.accounts.conftest import add_member

from .conftest import client_as

pytestmark = pytest.mark.django_db

INBOX = "/dashboard/inbox/"
BUSINESS = "+14155550100"
HTMX = {"HTTP_HX_REQUEST": "true"}


def receive(tenant, body: str, *, sender: str = "+14155550123", channel: str = "sms") -> dict:
    """An inbound message through the sandbox inbound endpoint (the real pipeline)."""
    response = tenant.client().post("/api/v1/sandbox/inbound", {
        "channel": channel, "from": sender, "to": BUSINESS, "body": body}, format="json")
    assert response.status_code == 201, response.content
    return response.json()["data"]




def conversation(tenant, cid: str) -> Conversation:
    return Conversation.objects.for_organization(tenant.org).get(pk=cid)


@pytest.fixture
def tenant():
    return make_tenant()


def test_list_shows_the_conversations_with_the_api_filters(tenant):
    first = receive(tenant, "Where is my parcel?", sender="+14155550111")
    second = receive(tenant, "Hello on WhatsApp", sender="+14155550122", channel="whatsapp")
    owner = client_as(tenant.owner, tenant.org)
    page = owner.get(INBOX)
    assert page.status_code == 200
    html = page.content.decode()
    assert "data-live" in html
    assert "Where is my parcel?" in html
    assert first["conversation_id"] in html
    assert second["conversation_id"] in html

    whatsapp = owner.get(INBOX + "list", {"channel": "whatsapp"}, **HTMX).content.decode()
    assert second["conversation_id"] in whatsapp
    assert first["conversation_id"] not in whatsapp
    assert "1 conversation" in whatsapp
    closed = owner.get(INBOX + "list", {"status": "closed"}, **HTMX).content.decode()
    assert "No conversations match" in closed
    found = owner.get(INBOX + "list", {"search": "parcel"}, **HTMX).content.decode()
    assert first["conversation_id"] in found
    assert second["conversation_id"] not in found
    # A filter value the API refuses is refused here the same way, never a 500.
    bad = owner.get(INBOX + "list", {"status": "nonsense"}, **HTMX)
    assert bad.status_code == 400
    assert b"VALIDATION_ERROR" in bad.content
    assert owner.get(INBOX, {"unread": "maybe"}).status_code == 400


def test_list_pages_by_cursor_in_a_fixed_number_of_queries(tenant, django_assert_max_num_queries):
    for n in range(3):
        receive(tenant, f"message {n}", sender=f"+1415555{n:04d}")
    owner = client_as(tenant.owner, tenant.org)
    owner.get(INBOX + "list", **HTMX)  # warm the session caches
    with django_assert_max_num_queries(12) as small:
        owner.get(INBOX + "list", **HTMX)
    baseline = len(small.captured_queries)
    for n in range(3, 30):
        receive(tenant, f"message {n}", sender=f"+1415555{n:04d}")
    # Ten times the rows: no query per row; only the capped total of a page with more.
    with django_assert_max_num_queries(baseline + 1):
        first = owner.get(INBOX + "list", **HTMX).content.decode()
    assert first.count('<li class="conversation-row') == 25
    assert "30 conversations" in first
    cursor = re.search(r"cursor=([^\"&]+)", first).group(1)

    second = owner.get(INBOX + "list", {"cursor": unquote(cursor.replace("&amp;", "&"))},
                       **HTMX)
    assert second.status_code == 200
    assert second.content.decode().count('<li class="conversation-row') == 5
    # A cursor of other filters is refused as the API refuses it.
    other = owner.get(INBOX + "list", {"cursor": unquote(cursor), "channel": "sms"}, **HTMX)
    assert other.status_code == 400
    assert b"INVALID_CURSOR" in other.content


def test_thread_shows_messages_state_and_reply_stores_the_message(tenant):
    cid = receive(tenant, "Can I change my order?")["conversation_id"]
    owner = client_as(tenant.owner, tenant.org)
    page = owner.get(f"{INBOX}{cid}").content.decode()
    assert "Can I change my order?" in page
    assert 'class="flash' not in page  # the thread's messages are not the messages framework's
    assert 'id="reply-form"' in page
    assert 'data-ai-led="false"' in page
    assert ">Human<" in page

    response = owner.post(f"{INBOX}{cid}/reply", {"body": "Yes, until it ships.",
                                                  "channel": "sms"}, **HTMX)
    assert response.status_code == 200, response.content
    assert response["HX-Trigger"] == "inbox-changed"
    assert "Yes, until it ships." in response.content.decode()
    [sent] = Message.objects.for_organization(tenant.org).filter(
        conversation_id=cid, direction="outbound")
    assert (sent.body, sent.channel, sent.to) == ("Yes, until it ships.", "sms", "+14155550123")
    assert sent.metadata.get("sent_by") == tenant.owner.pk
    assert conversation(tenant, cid).last_message_direction == "outbound"
    # An empty reply is the API's validation error, shown in #flash.
    empty = owner.post(f"{INBOX}{cid}/reply", {"body": ""}, **HTMX)
    assert empty.status_code == 422
    assert empty["HX-Retarget"] == "#flash"


def test_actions_go_through_the_conversation_services(tenant):
    cid = receive(tenant, "Help")["conversation_id"]
    agent = add_member(tenant, "agent", email="agent@example.com")
    owner = client_as(tenant.owner, tenant.org)

    assert owner.post(f"{INBOX}{cid}/assign", {"agent_id": agent.pk}, **HTMX).status_code == 200
    assert owner.post(f"{INBOX}{cid}/priority", {"priority": "urgent"}, **HTMX).status_code == 200
    thread = owner.post(f"{INBOX}{cid}/tags", {"tags": "billing, vip, billing"}, **HTMX)
    assert "#vip" in thread.content.decode()
    row = conversation(tenant, cid)
    assert (row.assignee_id, row.priority, row.tags) == (agent.pk, "urgent", ["billing", "vip"])
    assert owner.get(INBOX + "list", {"assignee_id": agent.pk}, **HTMX).content.decode().count(
        '<li class="conversation-row') == 1

    until = (timezone.now() + timedelta(hours=4)).isoformat()
    assert owner.post(f"{INBOX}{cid}/snooze", {"until": until}, **HTMX).status_code == 200
    assert conversation(tenant, cid).status == "snoozed"
    refused = owner.post(f"{INBOX}{cid}/reply", {"body": "x"}, **HTMX)
    assert refused.status_code == 409
    assert b"CONVERSATION_NOT_OPEN" in refused.content
    assert owner.post(f"{INBOX}{cid}/close", **HTMX).status_code == 200
    assert conversation(tenant, cid).status == "closed"
    again = owner.post(f"{INBOX}{cid}/close", **HTMX)
    assert again.status_code == 409  # the service's conflict, shown, not a 500
    assert owner.post(f"{INBOX}{cid}/reopen", **HTMX).status_code == 200
    assert conversation(tenant, cid).status == "open"
    past = owner.post(f"{INBOX}{cid}/snooze", {"until": "2001-01-01T00:00"}, **HTMX)
    assert past.status_code == 422
    # A plain form post (no htmx) lands back on the thread page.
    plain = owner.post(f"{INBOX}{cid}/priority", {"priority": "low"})
    assert plain.status_code == 302
    assert plain["Location"] == f"{INBOX}{cid}"
    assert owner.post(f"{INBOX}{cid}/priority", {"priority": "bogus"}).status_code == 302


def test_viewer_reads_but_every_write_is_refused(tenant):
    cid = receive(tenant, "Hi there")["conversation_id"]
    viewer = client_as(add_member(tenant, "viewer", email="viewer@example.com"), tenant.org)
    page = viewer.get(f"{INBOX}{cid}")
    assert page.status_code == 200
    html = page.content.decode()
    assert "Hi there" in html
    assert 'id="reply-form"' not in html
    assert 'id="thread-actions"' not in html
    for action, data in (("reply", {"body": "sneaky"}), ("close", {}),
                         ("assign", {"agent_id": ""}), ("tags", {"tags": "x"}),
                         ("priority", {"priority": "high"}), ("cobrowse/join", {})):
        response = viewer.post(f"{INBOX}{cid}/{action}", data, **HTMX)
        assert response.status_code == 403, action
        assert b"INSUFFICIENT_PERMISSIONS" in response.content
    assert not Message.objects.for_organization(tenant.org).filter(
        conversation_id=cid, direction="outbound").exists()
    assert conversation(tenant, cid).status == "open"


def test_whatsapp_window_hint_and_template_only_replies(tenant):
    cid = receive(tenant, "hi", channel="whatsapp")["conversation_id"]
    with tenant_context(tenant.org):
        MessageTemplate.objects.create(organization=tenant.org, name="order_update",
                                       channel="whatsapp", language="en", status="approved",
                                       content="Your order {{1}} shipped")
    owner = client_as(tenant.owner, tenant.org)
    inside = owner.get(f"{INBOX}{cid}").content.decode()
    assert 'data-window="open"' in inside
    # The contact wrote 25 hours ago (travelling in time would expire the session too).
    Message.objects.for_organization(tenant.org).filter(conversation_id=cid).update(
        created_at=timezone.now() - timedelta(hours=25))
    page = owner.get(f"{INBOX}{cid}").content.decode()
    assert 'data-window="closed"' in page
    assert "order_update|en" in page
    refused = owner.post(f"{INBOX}{cid}/reply", {"body": "late"}, **HTMX)
    assert refused.status_code == 422
    assert b"OUTSIDE_CUSTOMER_SERVICE_WINDOW" in refused.content
    # The same thread on SMS has no window: the hint follows the chosen channel.
    sms = owner.get(f"{INBOX}{cid}/reply-hint", {"channel": "sms"}, **HTMX)
    assert sms.status_code == 200
    assert b"data-window" not in sms.content
    # An approved template may still be sent.
    sent = owner.post(f"{INBOX}{cid}/reply", {"template": "order_update|en"}, **HTMX)
    assert sent.status_code == 200, sent.content
    assert Message.objects.for_organization(tenant.org).get(
        conversation_id=cid, direction="outbound").template_name == "order_update"


def test_cobrowse_join_needs_an_agent_role_and_a_live_session(tenant):
    cid = receive(tenant, "Can you see my screen?")["conversation_id"]
    owner = client_as(tenant.owner, tenant.org)
    none = owner.post(f"{INBOX}{cid}/cobrowse/join", **HTMX)
    assert none.status_code == 404
    assert b"COBROWSE_NOT_ACTIVE" in none.content
    with tenant_context(tenant.org):
        session = CobrowseSession.objects.create(
            organization=tenant.org, conversation=conversation(tenant, cid),
            room_name="r", control=True)
    assert 'id="cobrowse-join"' in owner.get(f"{INBOX}{cid}").content.decode()
    agent = client_as(add_member(tenant, "agent", email="a@example.com"), tenant.org)
    assert 'id="cobrowse-join"' not in agent.get(f"{INBOX}{cid}").content.decode()
    assert agent.post(f"{INBOX}{cid}/cobrowse/join", **HTMX).status_code == 403
    joined = owner.post(f"{INBOX}{cid}/cobrowse/join", {"control": "on"}, **HTMX)
    assert joined.status_code == 200
    html = joined.content.decode()
    assert f"/ws/cobrowse/{session.pk}/" in html
    assert 'data-control="true"' in html
    session.refresh_from_db()
    assert session.status == "active"
    assert session.agent_user_id == tenant.owner.pk
    ended = owner.post(f"{INBOX}{cid}/cobrowse/end", **HTMX)
    assert b"cobrowse-ended" in ended.content
    session.refresh_from_db()
    assert session.status == "ended"


def test_another_organizations_conversation_is_not_found(tenant):
    other = make_tenant()
    cid = receive(other, "private")["conversation_id"]
    owner = client_as(tenant.owner, tenant.org)
    assert owner.get(f"{INBOX}{cid}").status_code == 404
    assert owner.post(f"{INBOX}{cid}/close", **HTMX).status_code == 404
    assert conversation(other, cid).status == "open"


def test_thread_shows_the_newest_messages_and_pages_back(tenant, django_assert_max_num_queries):
    cid = receive(tenant, "message 0")["conversation_id"]
    owner = client_as(tenant.owner, tenant.org)
    owner.get(f"{INBOX}{cid}/thread", **HTMX)
    with django_assert_max_num_queries(40) as one:
        owner.get(f"{INBOX}{cid}/thread", **HTMX)
    baseline = len(one.captured_queries)
    for n in range(1, 35):
        receive(tenant, f"message {n}")
    # No query per message; only the paginator's capped total once there are more.
    with django_assert_max_num_queries(baseline + 1):
        html = owner.get(f"{INBOX}{cid}/thread", **HTMX).content.decode()
    assert html.count('<li class="message inbound"') == 30
    assert "message 34" in html
    assert ">message 4<" not in html
    cursor = unquote(re.search(r"/messages\?cursor=([^\"]+)\"", html).group(1))
    earlier = owner.get(f"{INBOX}{cid}/messages", {"cursor": cursor}, **HTMX).content.decode()
    assert earlier.count('<li class="message inbound"') == 5
    assert earlier.index("message 0") < earlier.index("message 4")
    assert "Earlier messages" not in earlier


def test_handoff_state_from_the_ai_agent_to_a_human_and_back(tenant):
    cid = receive(tenant, "I want to talk to a person")["conversation_id"]
    Conversation.objects.for_organization(tenant.org).filter(pk=cid).update(
        ai_led=True, ai_agent_id="agt_gone")  # a deleted agent keeps its id on the thread
    owner = client_as(tenant.owner, tenant.org)
    page = owner.get(f"{INBOX}{cid}/thread", **HTMX).content.decode()
    assert 'data-ai-led="true"' in page
    assert "AI agent</span> agt_gone" in page
    # The AI asks for a human (the API's handoff).
    asked = tenant.client().post(f"/api/v1/conversations/{cid}/handoff",
                                 {"reason_category": "customer_request"}, format="json")
    assert asked.status_code == 200, asked.content
    page = owner.get(f"{INBOX}{cid}/thread", **HTMX).content.decode()
    assert 'data-handoff="pending"' in page
    assert "Handoff brief" in page
    assert "(#1 in queue)" in page
    assert owner.post(f"{INBOX}{cid}/handoff-resolve", **HTMX).status_code == 200
    row = conversation(tenant, cid)
    assert (row.handoff_status, row.ai_led) == ("resolved", False)
    page = owner.get(f"{INBOX}{cid}/thread", **HTMX).content.decode()
    assert 'data-handoff="resolved"' in page
    assert "Let the AI agent resume" in page
    assert owner.post(f"{INBOX}{cid}/agent-resume", **HTMX).status_code == 200
    assert conversation(tenant, cid).ai_led is True
