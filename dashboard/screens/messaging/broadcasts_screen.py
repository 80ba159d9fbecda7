"""Broadcasts with their progress: the list with each one's counters and a progress bar
that polls while it runs, creating one (a contact list or a saved segment, a body or an
approved template) and canceling one, through `messaging.broadcasts` with the API's
scopes (messages:read / messages:write)."""

from __future__ import annotations

from django.contrib import messages as flash
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from dashboard.paging import keyset_page
from dashboard.views.base import DashboardView
from messaging.broadcasts import selectors, services
from messaging.broadcasts.models import ACTIVE_STATUSES, Broadcast
from platform_core.errors import APIError

from .common import ListWithFormView, text, with_badges
from .views import SEND_CHANNELS

READ, WRITE = "messages:read", "messages:write"
URL = "/dashboard/messaging/broadcasts/"
POLL_SECONDS = 2


def decorate(broadcasts: list[Broadcast]) -> list[Broadcast]:
    """Badges, the progress of each (the API's own), whether its row keeps polling."""
    for broadcast in with_badges(broadcasts):
        broadcast.progress = selectors.broadcast_progress(broadcast)
        broadcast.active = broadcast.status in ACTIVE_STATUSES
    return broadcasts


def _audience(data) -> dict:
    """The form's one audience select, `list:lst_...` or `segment:seg_...`."""
    kind, _, value = (data.get("audience") or "").partition(":")
    if kind in ("list", "segment") and value:
        return {f"{kind}_id": value}
    return {}


class BroadcastsView(ListWithFormView):
    required_scopes = {"GET": READ, "POST": WRITE}
    template_name = "dashboard/messaging/broadcasts.html"

    def _context(self, request: HttpRequest, **extra) -> dict:
        organization = self.principal.organization
        page = keyset_page(request, Broadcast.objects.all())
        context = {"page": page, "rows": decorate(page.rows), "poll_seconds": POLL_SECONDS,
                   "send_channels": SEND_CHANNELS, "sandbox": organization.sandbox,
                   "form": {}, **extra}
        if self.can(WRITE):
            context["audiences"] = selectors.audience_options(organization)
        return context

    def get(self, request: HttpRequest) -> HttpResponse:
        return render(request, "dashboard/messaging/broadcasts.html", self._context(request))

    def post(self, request: HttpRequest) -> HttpResponse:
        data = request.POST
        broadcast = services.broadcast_create(
            organization=self.principal.organization, principal=self.principal,
            request=request, name=(data.get("name") or "").strip(),
            channel=text(data, "channel"), audience=_audience(data),
            body=data.get("body") or None, template_name=text(data, "template_name"),
            language=text(data, "language"), from_=text(data, "from"))
        flash.success(request, f"Broadcast {broadcast.name} created ({broadcast.status}).")
        return redirect(URL)



class BroadcastRowView(DashboardView):
    """GET: one broadcast's row (what a running row polls); POST: cancel it."""

    required_scopes = {"GET": READ, "POST": WRITE}

    def _broadcast(self, broadcast_id: str) -> Broadcast:
        broadcast = Broadcast.objects.filter(pk=broadcast_id).first()
        if broadcast is None:
            raise APIError("NOT_FOUND", "No such broadcast in this organization.")
        return broadcast

    def get(self, request: HttpRequest, broadcast_id: str) -> HttpResponse:
        broadcast = decorate([self._broadcast(broadcast_id)])[0]
        return render(request, "dashboard/messaging/_broadcast_row.html",
                      {"b": broadcast, "poll_seconds": POLL_SECONDS})

    def post(self, request: HttpRequest, broadcast_id: str) -> HttpResponse:
        broadcast = services.broadcast_cancel(broadcast=self._broadcast(broadcast_id),
                                              principal=self.principal, request=request)
        flash.success(request, f"Broadcast {broadcast.name} canceled.")
        return redirect(URL)

    def handle_error(self, request: HttpRequest, error: APIError) -> HttpResponse:
        if request.method == "POST" and not request.htmx:
            flash.error(request, f"{error.message} ({error.code})")
            return redirect(URL)
        return super().handle_error(request, error)
