"""Team chat: direct messages. A DM thread starts with its first message (the API's
`POST /dms`); only its two participants see it (anyone else: 404, as in the API)."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse

from conversations.team_chat import dms
from conversations.team_chat.api import serializers as s
from conversations.team_chat.models import DMThread
from platform_core.errors import APIError

from .common import FORMER_MEMBER, WRITE, PersonRow, TeamChatScreen, form_input, go
from .views import T, newest_first_page


class DMScreen(TeamChatScreen):
    def dm_context(self, thread: DMThread) -> dict:
        return {"dm_thread": thread,
                "dm_messages": newest_first_page(dms.thread_messages(thread)),
                "can_write": self.can(WRITE)}

    def other(self, user_id: str) -> PersonRow:
        return self.people_by_id.get(user_id) or PersonRow(user_id, FORMER_MEMBER, "offline")


class DMWithView(DMScreen):
    """"Message" on a person: their thread with the caller, or an empty one to start."""

    def get(self, request: HttpRequest, user_id: str) -> HttpResponse:
        thread = dms.thread_with(self.user_id, user_id)
        if thread is not None:
            return redirect("team_chat:dm", thread.pk)
        person = self.people_by_id.get(user_id)
        if person is None or user_id == self.user_id:
            raise APIError("NOT_FOUND")
        return render(request, T + "screen.html", self.screen(dm_other=person, dm_messages=[]))


class DMStartView(TeamChatScreen):
    required_scopes = {"POST": WRITE}

    def back_url(self) -> str:
        user_id = self.request.POST.get("user_id", "")
        if user_id and "/" not in user_id:
            return reverse("team_chat:dm-with", args=[user_id])
        return super().back_url()

    def post(self, request: HttpRequest) -> HttpResponse:
        body = form_input(s.TeamChatDMSendSerializer, {
            "user_id": request.POST.get("user_id", ""), "body": request.POST.get("body", "")})
        msg = dms.dm_send(principal=self.principal, sender_id=self.user_id,
                          user_id=body["user_id"], body=body["body"],
                          mentions=body["mentions"], attachments=body["attachments"])
        return go(request, reverse("team_chat:dm", args=[msg.dm_thread_id]))


class DMView(DMScreen):
    def get(self, request: HttpRequest, thread_id: str) -> HttpResponse:
        thread = dms.thread_for(self.user_id, thread_id)
        context = self.dm_context(thread)
        context["dm_other"] = self.other(thread.other_user_id(self.user_id))
        return render(request, T + "screen.html", self.screen(**context))


class DMMessagesView(DMScreen):
    def get(self, request: HttpRequest, thread_id: str) -> HttpResponse:
        return render(request, T + "_dm_messages.html",
                      self.dm_context(dms.thread_for(self.user_id, thread_id)))

    def post(self, request: HttpRequest, thread_id: str) -> HttpResponse:
        thread = dms.thread_for(self.user_id, thread_id)
        body = form_input(s.TeamChatReplySerializer, {"body": request.POST.get("body", "")})
        dms.dm_post(thread=thread, sender_id=self.user_id, body=body["body"],
                    mentions=body["mentions"], attachments=body["attachments"])
        if not request.htmx:
            return redirect("team_chat:dm", thread_id)
        return render(request, T + "_dm_messages.html", self.dm_context(thread))


class DMReadView(TeamChatScreen):
    required_scopes = {"POST": WRITE}

    def post(self, request: HttpRequest, thread_id: str) -> HttpResponse:
        dms.dm_read(thread=dms.thread_for(self.user_id, thread_id), user_id=self.user_id,
                    message_id=request.POST.get("message_id") or None)
        return HttpResponse(status=204)
