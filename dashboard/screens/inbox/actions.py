"""The inbox's writes: reply, assign, snooze, close, reopen, tags, priority, handoff and
co-browse. Each parses the form with the API's own serializer (the same limits and
messages) and calls the service the API endpoint calls; the service raises APIError for a
refused change, which the base view shows in #flash.

An htmx request gets the thread pane back (and `HX-Trigger: inbox-changed`, so the list
refreshes at once even before the live event); a plain form post is redirected to the
thread page.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from conversations import assignment, cobrowse, handoff, replies, services
from conversations.api import serializers as s
from dashboard.views.base import DashboardView, validated
from platform_core.errors import APIError
from platform_core.identity.principal import Principal

from . import reads
from .views import WRITE


def _filled(post, *names: str) -> dict[str, str]:
    """The named fields that are not blank (a blank select means "not given")."""
    return {n: post[n].strip() for n in names if (post.get(n) or "").strip()}


def reply(principal: Principal, cid: str, post) -> None:
    data = _filled(post, "body", "channel", "subject")
    template = (post.get("template") or "").strip()
    if template:
        data["template_name"], _, language = template.partition("|")
        if language:
            data["language"] = language
    replies.conversation_reply(principal=principal, conversation_id=cid,
                               **validated(s.ReplySerializer, data))


def assign(principal: Principal, cid: str, post) -> None:
    data = validated(s.AssignSerializer, {"agent_id": (post.get("agent_id") or "").strip() or None})
    assignment.conversation_assign(principal=principal, conversation_id=cid, **data)


def snooze(principal: Principal, cid: str, post) -> None:
    until = (post.get("until_custom") or "").strip() or (post.get("until") or "").strip()
    data = validated(s.SnoozeSerializer, {"until": until})
    services.conversation_snooze(principal=principal, conversation_id=cid, **data)


def tags(principal: Principal, cid: str, post) -> None:
    values = [t.strip() for t in (post.get("tags") or "").split(",") if t.strip()]
    data = validated(s.TagsSerializer, {"tags": values})
    services.conversation_set_tags(principal=principal, conversation_id=cid, **data)


def priority(principal: Principal, cid: str, post) -> None:
    data = validated(s.PrioritySerializer, {"priority": post.get("priority", "")})
    services.conversation_set_priority(principal=principal, conversation_id=cid, **data)


def _verb(service: Callable) -> Callable:
    return lambda principal, cid, post: service(principal=principal, conversation_id=cid)


ACTIONS: dict[str, Callable[[Principal, str, Any], None]] = {
    "reply": reply,
    "assign": assign,
    "snooze": snooze,
    "tags": tags,
    "priority": priority,
    "close": _verb(services.conversation_close),
    "reopen": _verb(services.conversation_reopen),
    "read": _verb(services.conversation_mark_read),
    "handoff-resolve": _verb(handoff.handoff_resolve),
    "agent-resume": _verb(handoff.agent_resume),
}


class ActionView(DashboardView):
    required_scopes = {"POST": WRITE}

    def handle_error(self, request: HttpRequest, error: APIError) -> HttpResponse:
        if request.htmx:
            return super().handle_error(request, error)
        messages.error(request, f"{error.message} ({error.code})")
        return redirect(f"/dashboard/inbox/{self.kwargs['conversation_id']}")

    def post(self, request: HttpRequest, conversation_id: str, action: str) -> HttpResponse:
        ACTIONS[action](self.principal, conversation_id, request.POST)
        if not request.htmx:
            return redirect(f"/dashboard/inbox/{conversation_id}")
        thread = reads.conversation(conversation_id)
        response = render(request, "dashboard/inbox/_thread.html",
                          reads.thread_context(self.principal, thread))
        response["HX-Trigger"] = "inbox-changed"
        return response


def _require_cobrowse_role(principal: Principal) -> None:
    if principal.role not in cobrowse.AGENT_ROLES:
        raise APIError("INSUFFICIENT_PERMISSIONS", "Your role does not allow this.",
                       details={"required_roles": sorted(cobrowse.AGENT_ROLES)})


class CobrowseJoinView(DashboardView):
    """Join the visitor's co-browse session (the API's join): the panel connects to the
    relay with the agent token the service grants."""

    required_scopes = {"POST": WRITE}

    def post(self, request: HttpRequest, conversation_id: str) -> HttpResponse:
        _require_cobrowse_role(self.principal)
        data = validated(s.CobrowseJoinSerializer, {"control": request.POST.get("control") == "on"})
        session, grant = cobrowse.agent_join(principal=self.principal,
                                             conversation_id=conversation_id,
                                             control=data["control"], request=request)
        return render(request, "dashboard/inbox/_cobrowse.html",
                      {"cobrowse": session, "grant": grant,
                       "conversation": session.conversation, "can_cobrowse": True})


class CobrowseEndView(DashboardView):
    required_scopes = {"POST": WRITE}

    def post(self, request: HttpRequest, conversation_id: str) -> HttpResponse:
        _require_cobrowse_role(self.principal)
        session = cobrowse.session_end(principal=self.principal,
                                       conversation_id=conversation_id)
        return render(request, "dashboard/inbox/_cobrowse.html",
                      {"cobrowse": session, "conversation": session.conversation,
                       "can_cobrowse": True, "ended": True})
