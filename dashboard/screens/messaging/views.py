"""The message log (the filters of `GET /api/v1/messages`, keyset pages, live refresh),
a message's detail with its status timeline and events, and the send form.

Reads go through `messaging.selectors`, the send through `messaging.services.message_send`
(a test-mode organization's message goes to the sandbox provider through the real
pipeline), exactly as the API's message views do, with the same scopes.
"""

from __future__ import annotations

from django.contrib import messages as flash
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from dashboard.paging import keyset_page
from dashboard.views.base import DashboardView
from messaging import selectors, services
from messaging.models import Channel, Direction, Message, MessageStatus
from platform_core.errors import APIError

from .common import BADGES, ListWithFormView, text, with_badges

READ, WRITE = "messages:read", "messages:write"
LOG_URL = "/dashboard/messaging/"
# What the send form offers: the channels a person types a message for.
SEND_CHANNELS = [Channel.SMS, Channel.MMS, Channel.WHATSAPP, Channel.RCS, Channel.EMAIL,
                 Channel.VIBER]


def filter_choices() -> dict:
    return {"channels": Channel.values, "statuses": MessageStatus.values,
            "directions": Direction.values}


class MessageLogView(ListWithFormView):
    """GET: the log (the rows only for an htmx refresh). POST: send one message through
    the pipeline, then show it; a refused send shows the form again with the error."""

    required_scopes = {"GET": READ, "POST": WRITE}
    template_name = "dashboard/messaging/log.html"
    form_name = "send"

    def _context(self, request: HttpRequest, **extra) -> dict:
        organization = self.principal.organization
        queryset = selectors.messages_filtered(Message.objects.all(), request.GET,
                                               organization=organization)
        page = keyset_page(request, queryset.only(
            "id", "channel", "direction", "status", "to", "from_address", "body", "subject",
            "template_name", "error_code", "created_at", "organization_id"))
        return {"page": page, "rows": with_badges(page.rows), **filter_choices(),
                "send_channels": SEND_CHANNELS, "sandbox": organization.sandbox,
                "form": {}, **extra}

    def get(self, request: HttpRequest) -> HttpResponse:
        context = self._context(request)
        if request.htmx and request.htmx.target == "message-log":
            return render(request, "dashboard/messaging/_log_rows.html", context)
        return render(request, "dashboard/messaging/log.html", context)

    def post(self, request: HttpRequest) -> HttpResponse:
        data = request.POST
        message = services.message_send(
            organization=self.principal.organization, principal=self.principal,
            channel=text(data, "channel"), to=text(data, "to"), from_=text(data, "from"),
            body=data.get("body") or None, subject=text(data, "subject"),
            template_name=text(data, "template_name"), language=text(data, "language"))
        flash.success(request, f"Message {message.pk} accepted ({message.status}).")
        return redirect(f"{LOG_URL}{message.pk}")



class MessageDetailView(DashboardView):
    """GET: one message, its stamps, its status events, its fallbacks; POST cancel."""

    required_scopes = {"GET": READ, "POST": WRITE}

    def _message(self, message_id: str) -> Message:
        message = Message.objects.filter(pk=message_id).first()
        if message is None:
            raise APIError("NOT_FOUND", "No such message in this organization.")
        return message

    def get(self, request: HttpRequest, message_id: str) -> HttpResponse:
        message = self._message(message_id)
        message.badge = BADGES.get(message.status, "")
        context = {
            "message": message,
            "timeline": selectors.message_timeline(message),
            "events": selectors.message_events(message),
            "fallbacks": with_badges(Message.objects.filter(parent_id=message.pk)
                                     .only("id", "channel", "status", "organization_id")
                                     .order_by("id")[:20]),
        }
        template = ("dashboard/messaging/_detail_status.html"
                    if request.htmx and request.htmx.target == "message-status"
                    else "dashboard/messaging/detail.html")
        return render(request, template, context)

    def post(self, request: HttpRequest, message_id: str) -> HttpResponse:
        message = services.message_cancel(message=self._message(message_id),
                                          principal=self.principal, request=request)
        flash.success(request, f"Message {message.pk} canceled.")
        return redirect(f"{LOG_URL}{message.pk}")
