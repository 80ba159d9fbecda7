"""The developers area's landing page and its live event feed."""

from __future__ import annotations

import json
from datetime import datetime

from django.http import HttpRequest, HttpResponse

from platform_core.events import selectors as events
from platform_core.webhooks import selectors as webhooks

from .nav import DevelopersView

FEED_SIZE = 50


class IndexView(DevelopersView):
    """Where to go: keys, webhooks, the event feed and the API reference."""

    required_scopes = {"GET": "webhooks:read"}  # the main navigation's gate

    def get(self, request: HttpRequest) -> HttpResponse:
        return self.page(request, "dashboard/developers/index.html",
                         {"endpoint_count": webhooks.endpoints().count()})


def _row(envelope: dict) -> dict:
    """An envelope with its timestamp parsed for the `when` filter and its data as JSON
    (developers.js writes live rows the same way)."""
    try:
        created = datetime.fromisoformat(str(envelope.get("created_at", "")))
    except ValueError:
        created = None
    return {**envelope, "created": created,
            "data_json": json.dumps(envelope.get("data"), indent=2, default=str)}


class EventsView(DevelopersView):
    """The recent-event feed (the window GET /api/v1/events reads), then every new event
    as it happens over /ws/dashboard (developers.js prepends it)."""

    required_scopes = {"GET": "events:read"}
    tab = "events"

    def get(self, request: HttpRequest) -> HttpResponse:
        envelopes = events.recent_events(self.principal.organization.pk, limit=FEED_SIZE)
        return self.page(request, "dashboard/developers/events.html",
                         {"events": [_row(e) for e in envelopes], "feed_size": FEED_SIZE})
