"""The inbox: the conversation list (the API's filters and cursor pages), the thread pane,
and the partials htmx swaps in when a filter changes or a live event arrives.

Reads go through `reads.py` (the conversations selectors); writes are in `actions.py`.
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from dashboard.views.base import DashboardView

from . import reads

READ, WRITE = "conversations:read", "conversations:write"


class InboxView(DashboardView):
    """`/dashboard/inbox/` and `/dashboard/inbox/<id>`: the whole screen."""

    required_scopes = {"GET": READ}

    def get(self, request: HttpRequest, conversation_id: str | None = None) -> HttpResponse:
        context = {"page": reads.list_page(self.principal, request.GET),
                   **reads.filter_choices()}
        if conversation_id:
            thread = reads.conversation(conversation_id)
            context.update(reads.thread_context(self.principal, thread))
        return render(request, "dashboard/inbox/index.html", context)


class ListView(DashboardView):
    """The list partial: the first page (filters, live refresh) or the next one (cursor)."""

    required_scopes = {"GET": READ}

    def get(self, request: HttpRequest) -> HttpResponse:
        page = reads.list_page(self.principal, request.GET)
        template = ("dashboard/inbox/_rows.html" if request.GET.get("cursor")
                    else "dashboard/inbox/_list.html")
        return render(request, template, {"page": page})


class ThreadView(DashboardView):
    """The thread pane, or one of its live regions (`part`: head, messages, cobrowse)."""

    required_scopes = {"GET": READ}
    templates = {"": "dashboard/inbox/_thread.html", "head": "dashboard/inbox/_head.html",
                 "messages": "dashboard/inbox/_messages.html",
                 "cobrowse": "dashboard/inbox/_cobrowse.html"}

    def get(self, request: HttpRequest, conversation_id: str, part: str = "") -> HttpResponse:
        thread = reads.conversation(conversation_id)
        return render(request, self.templates[part],
                      reads.thread_context(self.principal, thread))


class EarlierMessagesView(DashboardView):
    """Older messages of the thread (the cursor of the page shown)."""

    required_scopes = {"GET": READ}

    def get(self, request: HttpRequest, conversation_id: str) -> HttpResponse:
        thread = reads.conversation(conversation_id)
        contacts = reads.selectors.contacts_by_id(self.principal.organization,
                                                  [thread.contact_id])
        messages, earlier = reads.thread_messages(
            thread, contact=reads.contact_label(contacts.get(thread.contact_id),
                                                thread.contact_id),
            members=reads.members_by_id(self.principal.organization),
            cursor=request.GET.get("cursor", ""))
        return render(request, "dashboard/inbox/_earlier.html",
                      {"conversation": thread, "thread_messages": messages,
                       "earlier_cursor": earlier})


class ReplyHintView(DashboardView):
    """The 24-hour window hint (and template chooser) of the channel picked to reply on."""

    required_scopes = {"GET": READ}

    def get(self, request: HttpRequest, conversation_id: str) -> HttpResponse:
        thread = reads.conversation(conversation_id)
        channel = request.GET.get("channel") or None
        if channel not in (None, *reads.CHANNELS):
            channel = None
        return render(request, "dashboard/inbox/_reply_hint.html",
                      {"conversation": thread, **reads.reply_context(thread, channel)})
