"""Team chat in real browsers over the team-chat WebSocket: two members (an owner and an
agent) and a viewer in separate browser contexts. A channel message arrives live, typing
and presence show, a thread reply goes both ways, and a DM starts and is answered live.
The viewer watches the same channel live without any write control."""

from __future__ import annotations

import pytest

from conversations.team_chat import services
from conversations.team_chat.models import ChatMessage
from platform_core.identity.principal import Principal
from platform_core.tenancy.context import tenant_context
from tests.browser import BROWSER_TEST
from tests.conftest import make_tenant
from tests.platform_core.accounts.conftest import add_member

from .conftest import shot

pytestmark = [*BROWSER_TEST, pytest.mark.django_db(transaction=True)]

BASE = "/dashboard/team-chat/"


def named(user, name: str):
    user.name = name
    user.save(update_fields=["name"])
    return user


@pytest.fixture
def team():
    tenant = make_tenant()
    alice = named(tenant.owner, "Alice Owner")
    bob = named(add_member(tenant, "agent", email=f"bob-{tenant.org.slug}@example.com"),
                "Bob Agent")
    vera = named(add_member(tenant, "viewer", email=f"vera-{tenant.org.slug}@example.com"),
                 "Vera Viewer")
    owner = Principal(kind="session", organization=tenant.org, role="owner", user_id=alice.pk)
    with tenant_context(tenant.org):
        channel = services.channel_create(principal=owner, user_id=alice.pk, name="general",
                                          description="Everything about the launch")
        membership = services.membership(channel, alice.pk)
        for user in (bob, vera):
            services.member_add(principal=owner, member=membership, user_id=user.pk)
    return tenant, alice, bob, vera, channel


def open_live(open_as, user, org, path: str):
    page = open_as(user, org).new_page()
    page.goto(path)
    page.wait_for_selector("#team-chat[data-live-ready]")
    return page


def test_channel_message_typing_presence_and_thread_live(open_as, team):
    tenant, alice, bob, vera, channel = team
    url = f"{BASE}channels/{channel.pk}"
    page_b = open_live(open_as, bob, tenant.org, url)
    page_v = open_as(vera, tenant.org, viewport={"width": 390, "height": 844}).new_page()
    page_v.goto(url)
    page_v.wait_for_selector("#team-chat[data-live-ready]")
    page_a = open_live(open_as, alice, tenant.org, url)

    # Presence: Bob's page saw Alice come online after it loaded.
    page_b.wait_for_selector(f'#people [data-presence="{alice.pk}"][data-status="online"]')
    page_a.wait_for_selector(f'#people [data-presence="{bob.pk}"][data-status="online"]')
    # Vera's tab goes to the background: her page beats `away` and Alice's dot follows.
    page_v.evaluate("""() => {
        Object.defineProperty(document, "hidden", {value: true, configurable: true});
        document.dispatchEvent(new Event("visibilitychange"));
    }""")
    page_a.wait_for_selector(f'#people [data-presence="{vera.pk}"][data-status="away"]')
    assert page_a.locator(f'#people [data-presence="{vera.pk}"]').inner_text() == "(away)"

    # Alice posts; Bob and the viewer see it arrive without reloading.
    page_a.fill("#message-body", "Launch moves to Thursday")
    page_a.press("#message-body", "Enter")
    page_a.locator("#messages").get_by_text("Launch moves to Thursday").wait_for()
    assert page_a.input_value("#message-body") == ""
    page_b.locator("#messages").get_by_text("Launch moves to Thursday").wait_for()
    page_v.locator("#messages").get_by_text("Launch moves to Thursday").wait_for()

    # Bob types: Alice sees the indicator; his message clears it.
    page_b.locator("#message-body").press_sequentially("On it")
    page_a.wait_for_function(
        "document.querySelector('#typing').textContent === 'Bob Agent is typing…'")
    page_b.press("#message-body", "Enter")
    page_a.locator("#messages").get_by_text("On it").wait_for()
    page_a.wait_for_function("document.querySelector('#typing').textContent === ''")

    # Thread: Alice replies on her message; Bob sees the count, opens it, answers.
    root = page_a.locator("article.tc-msg", has_text="Launch moves to Thursday")
    root.get_by_role("link", name="Reply in thread").click()
    page_a.wait_for_selector("#reply-form")
    page_a.fill("#reply-body", "Marketing is informed")
    page_a.click("#reply-form button[type=submit]")
    page_a.locator("#thread-replies").get_by_text("Marketing is informed").wait_for()
    b_root = page_b.locator("article.tc-msg", has_text="Launch moves to Thursday")
    b_root.get_by_role("link", name="1 reply").wait_for()
    b_root.get_by_role("link", name="1 reply").click()
    page_b.locator("#thread-replies").get_by_text("Marketing is informed").wait_for()
    page_b.fill("#reply-body", "Support too")
    page_b.press("#reply-body", "Enter")
    page_a.locator("#thread-replies").get_by_text("Support too").wait_for()
    page_a.locator("article.tc-msg", has_text="Launch moves to Thursday").get_by_role(
        "link", name="2 replies").wait_for()
    with tenant_context(tenant.org):
        replies = ChatMessage.objects.filter(parent__body="Launch moves to Thursday")
        assert sorted(replies.values_list("body", flat=True)) == [
            "Marketing is informed", "Support too"]
    shot(page_a, "team-chat-channel")

    # The viewer read everything live but has nothing to write with.
    page_v.locator("#messages").get_by_text("On it").wait_for()
    assert page_v.locator("#post-form").count() == 0
    assert page_v.locator("#new-channel-form").count() == 0
    assert page_v.locator("#read-only").is_visible()
    page_v.locator("article.tc-msg", has_text="Launch moves to Thursday").get_by_role(
        "link", name="2 replies").click()
    page_v.locator("#thread-replies").get_by_text("Support too").wait_for()
    assert page_v.locator("#reply-form").count() == 0
    shot(page_v, "team-chat-viewer-phone")


def test_direct_message_and_a_new_channel_live(open_as, team):
    tenant, alice, bob, _vera, _channel = team
    page_b = open_live(open_as, bob, tenant.org, BASE)
    page_a = open_live(open_as, alice, tenant.org, BASE)

    page_a.locator("#people").get_by_role("link", name="Bob Agent").click()
    page_a.wait_for_url(f"**{BASE}dms/with/{bob.pk}")
    page_a.fill("#message-body", "Got a minute for the demo?")
    page_a.press("#message-body", "Enter")
    page_a.wait_for_url(f"**{BASE}dms/dmt_*")
    page_a.wait_for_selector("#team-chat[data-live-ready]")

    # Bob's sidebar lists the new DM with an unread badge, live.
    dm_link = page_b.locator("#dm-list").get_by_role("link", name="Alice Owner")
    dm_link.wait_for()
    assert page_b.locator("#dm-list .tc-unread").inner_text().startswith("1")
    dm_link.click()
    page_b.wait_for_selector("#team-chat[data-live-ready]")
    page_b.locator("#messages").get_by_text("Got a minute for the demo?").wait_for()

    page_b.locator("#message-body").press_sequentially("Sure")
    page_a.wait_for_function(
        "document.querySelector('#typing').textContent === 'Bob Agent is typing…'")
    page_b.locator("#message-body").press_sequentially(", in 5 minutes")
    page_b.press("#message-body", "Enter")
    page_a.locator("#messages").get_by_text("Sure, in 5 minutes").wait_for()
    assert page_a.locator(f'h2 [data-presence="{bob.pk}"]').get_attribute(
        "data-status") == "online"
    shot(page_a, "team-chat-dm")

    # A new channel: Bob is added and his sidebar gains it live (his socket joins it too).
    page_a.goto(BASE)
    page_a.click("#new-channel summary")
    page_a.fill("#channel-name", "launch-war-room")
    page_a.click("#new-channel-form button[type=submit]")
    page_a.wait_for_url(f"**{BASE}channels/tch_*")
    assert page_a.locator("#conversation-title").inner_text() == "# launch-war-room"
    page_a.click("#channel-members summary")
    page_a.select_option("#add-member", label="Bob Agent")
    page_a.click("#add-member-form button[type=submit]")
    page_a.locator("#flash").get_by_text("Bob Agent joined #launch-war-room.").wait_for()
    page_b.locator("#channel-list").get_by_role("link", name="# launch-war-room").wait_for()
    page_a.wait_for_selector("#team-chat[data-live-ready]")
    page_a.fill("#message-body", "Welcome, Bob")
    page_a.press("#message-body", "Enter")
    page_b.locator("#channel-list a", has_text="launch-war-room").locator(
        "xpath=..").locator(".tc-unread").wait_for()
