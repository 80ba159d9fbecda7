"""Team chat screens through the Django test client: role refusals (a viewer reads but
every write answers 403), membership and tenancy (404 / 403 as in the API), validation
errors shown instead of 500s, CSRF, and the query count of the screen."""

from __future__ import annotations

import pytest

from conversations.team_chat import dms, services
from conversations.team_chat.models import ChannelMember, ChatMessage, TeamChannel
from platform_core.identity.principal import Principal
from platform_core.tenancy.context import tenant_context
from tests.conftest import make_tenant
from tests.platform_core.accounts.conftest import add_member

from .conftest import client_as

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}
BASE = "/dashboard/team-chat/"




def as_principal(user, org, role: str = "owner") -> Principal:
    return Principal(kind="session", organization=org, role=role, user_id=user.pk)


def make_channel(tenant, name: str, *members) -> TeamChannel:
    with tenant_context(tenant.org):
        channel = services.channel_create(principal=as_principal(tenant.owner, tenant.org),
                                          user_id=tenant.owner.pk, name=name)
        owner = services.membership(channel, tenant.owner.pk)
        for user in members:
            services.member_add(principal=as_principal(tenant.owner, tenant.org), member=owner,
                                user_id=user.pk)
    return channel


def post_message(channel, user, body: str, parent: str | None = None) -> ChatMessage:
    with tenant_context(channel.organization):
        return services.message_post(member=services.membership(channel, user.pk), body=body,
                                     mentions=[], attachments=[], parent_message_id=parent)


@pytest.fixture
def team():
    tenant = make_tenant()
    agent = add_member(tenant, "agent", email=f"agent-{tenant.org.slug}@example.com")
    viewer = add_member(tenant, "viewer", email=f"viewer-{tenant.org.slug}@example.com")
    channel = make_channel(tenant, "general", agent, viewer)
    return tenant, agent, viewer, channel


def test_viewer_reads_the_channel_without_write_controls_and_every_write_is_refused(team):
    tenant, agent, viewer, channel = team
    post_message(channel, agent, "Hello from the agent")
    client = client_as(viewer, tenant.org)

    page = client.get(f"{BASE}channels/{channel.pk}")
    assert page.status_code == 200
    html = page.content.decode()
    assert "Hello from the agent" in html
    assert 'id="post-form"' not in html
    assert 'id="new-channel-form"' not in html
    assert 'id="leave-form"' not in html
    assert 'id="read-only"' in html

    refused = [
        client.post(f"{BASE}channels/{channel.pk}/messages", {"body": "sneaky"}, **HTMX),
        client.post(f"{BASE}channels/{channel.pk}/messages", {"body": "sneaky"}),
        client.post(f"{BASE}channels", {"name": "viewers-only"}, **HTMX),
        client.post(f"{BASE}channels/{channel.pk}/leave", **HTMX),
        client.post(f"{BASE}channels/{channel.pk}/read", **HTMX),
        client.post(f"{BASE}dms", {"user_id": agent.pk, "body": "psst"}, **HTMX),
    ]
    assert [r.status_code for r in refused] == [403] * len(refused)
    assert b'data-error-code="INSUFFICIENT_PERMISSIONS"' in refused[0].content
    assert refused[0]["HX-Retarget"] == "#flash"
    with tenant_context(tenant.org):
        assert ChatMessage.objects.filter(body__in=["sneaky", "psst"]).count() == 0
        assert not TeamChannel.objects.filter(name="viewers-only").exists()
        assert ChannelMember.objects.filter(channel=channel, user=viewer).exists()


def test_agent_posts_a_message_and_a_thread_reply(team):
    tenant, agent, _viewer, channel = team
    client = client_as(agent, tenant.org)
    page = client.get(f"{BASE}channels/{channel.pk}")
    assert 'id="post-form"' in page.content.decode()

    posted = client.post(f"{BASE}channels/{channel.pk}/messages", {"body": "Standup at 10"},
                         **HTMX)
    assert posted.status_code == 200
    assert "Standup at 10" in posted.content.decode()
    with tenant_context(tenant.org):
        root = ChatMessage.objects.get(body="Standup at 10")
        assert root.sender_user_id == agent.pk

    reply = client.post(f"{BASE}channels/{channel.pk}/threads/{root.pk}/replies",
                        {"body": "On my way"}, **HTMX)
    assert reply.status_code == 200
    assert "On my way" in reply.content.decode()
    assert "1 reply" in reply.content.decode()
    with tenant_context(tenant.org):
        root.refresh_from_db()
        assert root.reply_count == 1
    # Without htmx the thread opens in the page.
    opened = client.get(f"{BASE}channels/{channel.pk}?thread={root.pk}")
    assert 'id="reply-form"' in opened.content.decode()
    assert "On my way" in opened.content.decode()


def test_bad_input_answers_the_error_not_a_500(team):
    tenant, agent, _viewer, channel = team
    client = client_as(tenant.owner, tenant.org)
    blank = client.post(f"{BASE}channels/{channel.pk}/messages", {"body": "   "}, **HTMX)
    assert blank.status_code == 422
    assert b'data-error-code="VALIDATION_ERROR"' in blank.content
    assert b"body:" in blank.content
    too_long = client.post(f"{BASE}channels/{channel.pk}/messages", {"body": "x" * 4001}, **HTMX)
    assert too_long.status_code == 422
    duplicate = client.post(f"{BASE}channels", {"name": "general"}, **HTMX)
    assert duplicate.status_code == 409
    assert b"ALREADY_EXISTS" in duplicate.content
    # A plain form post shows the refusal on the channel page it came from.
    plain = client.post(f"{BASE}channels/{channel.pk}/messages", {"body": ""}, follow=True)
    assert plain.redirect_chain[-1][0] == f"{BASE}channels/{channel.pk}"
    assert b"VALIDATION_ERROR" in plain.content
    missing_root = client.post(f"{BASE}channels/{channel.pk}/threads/tcm_nope/replies",
                               {"body": "hi"}, **HTMX)
    assert missing_root.status_code == 404
    stranger_dm = client.post(f"{BASE}dms", {"user_id": "usr_nobody", "body": "hi"}, **HTMX)
    assert stranger_dm.status_code == 422


def test_channel_membership_and_tenancy_answer_like_the_api(team):
    tenant, agent, _viewer, channel = team
    outsider = add_member(tenant, "agent", email=f"out-{tenant.org.slug}@example.com")
    client = client_as(outsider, tenant.org)
    page = client.get(f"{BASE}channels/{channel.pk}")
    assert page.status_code == 403
    assert b"NOT_A_MEMBER" in page.content
    assert client.post(f"{BASE}channels/{channel.pk}/messages", {"body": "hi"},
                       **HTMX).status_code == 403

    other = make_tenant()
    foreign = make_channel(other, "general")
    assert client.get(f"{BASE}channels/{foreign.pk}").status_code == 404
    assert client.get(f"{BASE}channels/{foreign.pk}/messages", **HTMX).status_code == 404

    # A plain member cannot add people (owner or admin of the channel only).
    member_client = client_as(agent, tenant.org)
    added = member_client.post(f"{BASE}channels/{channel.pk}/members",
                               {"user_id": outsider.pk}, **HTMX)
    assert added.status_code == 403
    assert b"CHANNEL_ROLE_REQUIRED" in added.content
    # The owner can: the outsider joins and then reads the channel.
    owner_client = client_as(tenant.owner, tenant.org)
    added = owner_client.post(f"{BASE}channels/{channel.pk}/members",
                              {"user_id": outsider.pk}, **HTMX)
    assert added.status_code == 200
    assert added["HX-Redirect"] == f"{BASE}channels/{channel.pk}"
    assert client.get(f"{BASE}channels/{channel.pk}").status_code == 200
    # And may leave again.
    left = client.post(f"{BASE}channels/{channel.pk}/leave", **HTMX)
    assert left["HX-Redirect"] == BASE
    assert client.get(f"{BASE}channels/{channel.pk}").status_code == 403


def test_dm_start_send_and_privacy(team):
    tenant, agent, viewer, _channel = team
    client = client_as(tenant.owner, tenant.org)
    compose = client.get(f"{BASE}dms/with/{agent.pk}")
    assert compose.status_code == 200
    assert b'name="user_id"' in compose.content
    started = client.post(f"{BASE}dms", {"user_id": agent.pk, "body": "Got a minute?"}, **HTMX)
    with tenant_context(tenant.org):
        thread = dms.thread_with(tenant.owner.pk, agent.pk)
    assert started["HX-Redirect"] == f"{BASE}dms/{thread.pk}"
    # The person's link now leads to the existing thread.
    assert client.get(f"{BASE}dms/with/{agent.pk}")["Location"] == f"{BASE}dms/{thread.pk}"

    agent_client = client_as(agent, tenant.org)
    page = agent_client.get(f"{BASE}dms/{thread.pk}")
    assert b"Got a minute?" in page.content
    sent = agent_client.post(f"{BASE}dms/{thread.pk}/messages", {"body": "Sure"}, **HTMX)
    assert sent.status_code == 200
    assert b"Sure" in sent.content
    assert agent_client.post(f"{BASE}dms/{thread.pk}/read", **HTMX).status_code == 204

    # The third person sees nothing of it.
    viewer_client = client_as(viewer, tenant.org)
    assert viewer_client.get(f"{BASE}dms/{thread.pk}").status_code == 404
    assert viewer_client.get(f"{BASE}dms/{thread.pk}/messages", **HTMX).status_code == 404


def test_unread_counts_in_the_sidebar(team):
    tenant, agent, _viewer, channel = team
    second = make_channel(tenant, "random", agent)
    post_message(second, tenant.owner, "one")
    post_message(second, tenant.owner, "two")
    client = client_as(agent, tenant.org)
    sidebar = client.get(f"{BASE}conversations?channel={channel.pk}", **HTMX).content.decode()
    assert "# random" in sidebar
    assert ">2<" in sidebar.replace("\n", "")
    client.post(f"{BASE}channels/{second.pk}/read", **HTMX)
    sidebar = client.get(f"{BASE}conversations?channel={channel.pk}", **HTMX).content.decode()
    assert "tc-unread" not in sidebar


def test_csrf_is_required_on_posts(team):
    tenant, _agent, _viewer, channel = team
    client = client_as(tenant.owner, tenant.org, enforce_csrf_checks=True)
    refused = client.post(f"{BASE}channels/{channel.pk}/messages", {"body": "forged"})
    assert refused.status_code == 403
    with tenant_context(tenant.org):
        assert not ChatMessage.objects.filter(body="forged").exists()


def test_screen_query_count_does_not_grow_with_channels_and_messages(
        team, django_assert_max_num_queries):
    tenant, agent, _viewer, channel = team
    for n in range(8):
        extra = make_channel(tenant, f"room-{n}", agent)
        post_message(extra, tenant.owner, f"hello {n}")
    for n in range(30):
        root = post_message(channel, agent if n % 2 else tenant.owner, f"message {n}")
    post_message(channel, tenant.owner, "a reply", parent=root.pk)
    for user in (_viewer,):
        with tenant_context(tenant.org):
            dms.dm_send(principal=as_principal(user, tenant.org, "viewer"), sender_id=user.pk,
                        user_id=agent.pk, body="hi")
    client = client_as(agent, tenant.org)
    client.get(f"{BASE}channels/{channel.pk}")  # warm the session caches
    with django_assert_max_num_queries(16):
        page = client.get(f"{BASE}channels/{channel.pk}?thread={root.pk}")
    assert page.status_code == 200
    assert page.content.decode().count('class="tc-msg"') == 30
    with django_assert_max_num_queries(7):
        assert client.get(f"{BASE}channels/{channel.pk}/messages", **HTMX).status_code == 200
