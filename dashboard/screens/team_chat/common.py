"""What every team-chat screen shares: the acting user, the channel lookup, form input
checked by the API's own serializers, and the sidebar (channels, DMs, people, presence).

The views call the services and selectors the team-chat API calls
(conversations/team_chat/api/views.py) with the same scopes: reading needs
`conversations:read`, every write `conversations:write`.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django_htmx.http import HttpResponseClientRedirect
from rest_framework import exceptions as drf
from rest_framework import serializers

from conversations.team_chat import dms, presence, selectors, services
from conversations.team_chat.actors import acting_user_id
from conversations.team_chat.models import ChannelMember, DMThread, TeamChannel
from dashboard.views.base import DashboardView
from platform_core.api.exceptions import flatten_issues
from platform_core.api.serialization import validated_input
from platform_core.errors import APIError

READ, WRITE = "conversations:read", "conversations:write"
PAGE = 50  # the newest messages a conversation shows (the API pages further back)
SIDEBAR_MAX = 200
FORMER_MEMBER = "Former member"


def form_input(serializer_class: type[serializers.Serializer], data: dict[str, Any]
               ) -> dict[str, Any]:
    """Form fields checked by the API's request serializer (one rule for both); a refusal
    is the API's 422 VALIDATION_ERROR, worded for a person ("body: ...")."""
    try:
        return dict(validated_input(serializer_class, data).validated_data)
    except drf.ValidationError as exc:
        issues = flatten_issues(exc.detail)
        message = "; ".join(f"{i['field']}: {i['message']}" for i in issues)
        raise APIError("VALIDATION_ERROR", message, status=422) from None


def go(request: HttpRequest, url: str) -> HttpResponse:
    """After a write: htmx navigates the whole page, a plain form follows the redirect."""
    return HttpResponseClientRedirect(url) if request.htmx else redirect(url)


@dataclass(frozen=True)
class PersonRow:
    user_id: str
    name: str
    status: str  # online, away, offline


@dataclass(frozen=True)
class ChannelRow:
    channel: TeamChannel
    role: str
    unread: int


@dataclass(frozen=True)
class DMRow:
    thread: DMThread
    other_id: str
    other_name: str
    unread: int


class TeamChatScreen(DashboardView):
    required_scopes = {"GET": READ, "POST": WRITE}

    @cached_property
    def user_id(self) -> str:
        return acting_user_id(self.principal)

    def member(self, channel_id: str) -> ChannelMember:
        return services.channel_membership(channel_id, self.user_id)

    def back_url(self) -> str:
        """Where a refused plain-form write lands (the POST-only route cannot be shown)."""
        if "channel_id" in self.kwargs:
            return reverse("team_chat:channel", args=[self.kwargs["channel_id"]])
        if "thread_id" in self.kwargs:
            return reverse("team_chat:dm", args=[self.kwargs["thread_id"]])
        return reverse("team_chat:index")

    def handle_error(self, request: HttpRequest, error: APIError) -> HttpResponse:
        if not request.htmx and request.method == "POST":
            messages.error(request, f"{error.message} ({error.code})")
            return redirect(self.back_url())
        return super().handle_error(request, error)

    # --- Sidebar --------------------------------------------------------------------

    @cached_property
    def people(self) -> list[PersonRow]:
        everyone = selectors.people(self.principal.organization)
        # Degrades open like the API's snapshot: no presence store, everyone offline.
        entries = presence.snapshot(org_id=self.principal.organization.pk,
                                    user_ids=[p.user_id for p in everyone]) or []
        status = {e.user_id: e.status for e in entries}
        return [PersonRow(p.user_id, p.name, status.get(p.user_id, "offline"))
                for p in everyone]

    @cached_property
    def people_by_id(self) -> dict[str, PersonRow]:
        return {p.user_id: p for p in self.people}

    def conversations(self, *, channel_id: str = "", dm_id: str = "") -> dict[str, Any]:
        """The channel and DM lists with unread counts (the refreshable sidebar region)."""
        memberships = list(selectors.my_memberships(self.user_id)
                           .order_by("channel__name")[:SIDEBAR_MAX])
        unread = selectors.channel_unread_counts(self.user_id,
                                                 [m.channel_id for m in memberships])
        threads = list(dms.my_threads(self.user_id)
                       .order_by("-last_message_id", "-id")[:SIDEBAR_MAX])
        dm_unread = dms.unread_counts(self.user_id, [t.pk for t in threads])
        dm_rows = []
        for thread in threads:
            other = thread.other_user_id(self.user_id)
            person = self.people_by_id.get(other)
            dm_rows.append(DMRow(thread, other, person.name if person else FORMER_MEMBER,
                                 dm_unread.get(thread.pk, 0)))
        return {
            "channels": [ChannelRow(m.channel, m.role, unread.get(m.channel_id, 0))
                         for m in memberships],
            "dms": dm_rows,
            "current_channel_id": channel_id,
            "current_dm_id": dm_id,
        }

    def screen(self, **extra: Any) -> dict[str, Any]:
        """Context of the whole page: sidebar plus whatever conversation is open."""
        context = self.conversations(
            channel_id=extra["channel"].pk if extra.get("channel") else "",
            dm_id=extra["dm_thread"].pk if extra.get("dm_thread") else "")
        context.update({"me": self.user_id, "people": self.people,
                        "can_write": self.can(WRITE), **extra})
        return context
