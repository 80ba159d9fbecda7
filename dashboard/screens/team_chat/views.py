"""Team chat: the screen, channels (create, members, leave), channel messages and threads.

Every region that changes live (the message list, a thread's replies, the sidebar's
conversation list) is its own partial: team_chat.js asks htmx to fetch it again when the
team-chat socket reports a change, and a post answers with the refreshed partial. Posting
twice never shows a message twice, whichever of the answer and the live frame comes first.
"""

from __future__ import annotations

from django.contrib import messages
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse

from conversations.team_chat import conf, selectors, services
from conversations.team_chat.api import serializers as s
from conversations.team_chat.models import ChannelMember
from platform_core.errors import APIError

from .common import PAGE, SIDEBAR_MAX, WRITE, TeamChatScreen, form_input, go

T = "dashboard/team_chat/"


def newest_first_page(queryset: QuerySet, size: int = PAGE) -> list:
    """The newest `size` rows shown oldest first, as a conversation reads."""
    return list(reversed(queryset.order_by("-id")[:size]))


class IndexView(TeamChatScreen):
    def get(self, request: HttpRequest) -> HttpResponse:
        return render(request, T + "screen.html", self.screen())


class ConversationsView(TeamChatScreen):
    """The sidebar's channel and DM lists (refreshed when unread counts change)."""

    def get(self, request: HttpRequest) -> HttpResponse:
        context = self.conversations(channel_id=request.GET.get("channel", ""),
                                     dm_id=request.GET.get("dm", ""))
        return render(request, T + "_conversations.html", context)


class ChannelCreateView(TeamChatScreen):
    required_scopes = {"POST": WRITE}

    def post(self, request: HttpRequest) -> HttpResponse:
        body = form_input(s.TeamChatChannelCreateSerializer, {
            "name": request.POST.get("name", ""),
            "description": request.POST.get("description", "")})
        channel = services.channel_create(principal=self.principal, user_id=self.user_id,
                                          name=body["name"], description=body["description"])
        return go(request, reverse("team_chat:channel", args=[channel.pk]))


class ChannelScreen(TeamChatScreen):
    """A channel route: the caller's membership (404 / 403 NOT_A_MEMBER as in the API)."""

    def channel_context(self, member: ChannelMember) -> dict:
        channel = member.channel
        roots = newest_first_page(selectors.channel_roots(channel))
        return {"channel": channel, "my_role": member.role, "roots": roots,
                "can_write": self.can(WRITE)}

    def thread_context(self, member: ChannelMember, message_id: str) -> dict:
        root = selectors.thread_root(member.channel, message_id)
        if root is None:
            raise APIError("NOT_FOUND")
        replies = list(selectors.thread_replies(root).order_by("id")[:conf.page_max()])
        return {"channel": member.channel, "root": root, "replies": replies,
                "can_write": self.can(WRITE)}


class ChannelView(ChannelScreen):
    def get(self, request: HttpRequest, channel_id: str) -> HttpResponse:
        member = self.member(channel_id)
        context = self.channel_context(member)
        members = list(selectors.channel_members(member.channel)[:SIDEBAR_MAX])
        in_channel = {m.user_id for m in members}
        context["members"] = [
            (self.people_by_id.get(m.user_id), m) for m in members]
        context["can_manage"] = (self.can(WRITE) and member.role in services.MANAGERS)
        context["addable"] = [p for p in self.people if p.user_id not in in_channel]
        if request.GET.get("thread"):
            context.update(self.thread_context(member, request.GET["thread"]))
        return render(request, T + "screen.html", self.screen(**context))


class MessagesView(ChannelScreen):
    def get(self, request: HttpRequest, channel_id: str) -> HttpResponse:
        return render(request, T + "_messages.html",
                      self.channel_context(self.member(channel_id)))

    def post(self, request: HttpRequest, channel_id: str) -> HttpResponse:
        member = self.member(channel_id)
        body = form_input(s.TeamChatMessageCreateSerializer,
                          {"body": request.POST.get("body", "")})
        services.message_post(member=member, body=body["body"], mentions=body["mentions"],
                              attachments=body["attachments"])
        if not request.htmx:
            return redirect("team_chat:channel", channel_id)
        return render(request, T + "_messages.html", self.channel_context(member))


class ThreadView(ChannelScreen):
    """The thread panel (opened beside the channel)."""

    def get(self, request: HttpRequest, channel_id: str, message_id: str) -> HttpResponse:
        if not request.htmx:
            return redirect(reverse("team_chat:channel", args=[channel_id])
                            + f"?thread={message_id}")
        context = self.thread_context(self.member(channel_id), message_id)
        return render(request, T + "_thread.html", context)


class ThreadRepliesView(ChannelScreen):
    def get(self, request: HttpRequest, channel_id: str, message_id: str) -> HttpResponse:
        context = self.thread_context(self.member(channel_id), message_id)
        return render(request, T + "_thread_replies.html", context)

    def post(self, request: HttpRequest, channel_id: str, message_id: str) -> HttpResponse:
        member = self.member(channel_id)
        body = form_input(s.TeamChatReplySerializer, {"body": request.POST.get("body", "")})
        services.message_post(member=member, body=body["body"], mentions=body["mentions"],
                              attachments=body["attachments"], parent_message_id=message_id)
        if not request.htmx:
            return redirect(reverse("team_chat:channel", args=[channel_id])
                            + f"?thread={message_id}")
        return render(request, T + "_thread_replies.html",
                      self.thread_context(member, message_id))


class MemberAddView(TeamChatScreen):
    """Add a member of the organization (owners and admins of the channel: the service
    refuses anyone else with 403 CHANNEL_ROLE_REQUIRED)."""

    required_scopes = {"POST": WRITE}

    def post(self, request: HttpRequest, channel_id: str) -> HttpResponse:
        member = self.member(channel_id)
        body = form_input(s.TeamChatMemberAddSerializer,
                          {"user_id": request.POST.get("user_id", ""),
                           "role": request.POST.get("role") or "member"})
        services.member_add(principal=self.principal, member=member,
                            user_id=body["user_id"], role=body["role"])
        added = self.people_by_id.get(body["user_id"])
        messages.success(request, f"{added.name if added else 'The member'} joined "
                                  f"#{member.channel.name}.")
        return go(request, reverse("team_chat:channel", args=[channel_id]))


class LeaveView(TeamChatScreen):
    required_scopes = {"POST": WRITE}

    def post(self, request: HttpRequest, channel_id: str) -> HttpResponse:
        member = self.member(channel_id)
        services.member_remove(principal=self.principal, member=member, user_id=self.user_id)
        messages.success(request, f"You left #{member.channel.name}.")
        return go(request, reverse("team_chat:index"))


class ReadView(TeamChatScreen):
    """Advance the read marker while the channel is on screen (the API's read route)."""

    required_scopes = {"POST": WRITE}

    def post(self, request: HttpRequest, channel_id: str) -> HttpResponse:
        services.read_marker_advance(member=self.member(channel_id),
                                     message_id=request.POST.get("message_id") or None)
        return HttpResponse(status=204)

