"""Channels routes: the SSE stream (HTTP) and WebSockets, served by daphne.

Each app that serves a stream or socket adds its route here. Importing this module (as
config/asgi.py does) also installs the access-log sanitizer, so query strings (the SSE
`token`) never reach daphne's or Django's access logs.
"""

from __future__ import annotations

from django.urls import re_path

from . import accesslog

accesslog.install()


def http_routes() -> list:
    """Long-lived HTTP routes (Server-Sent Events) handled by Channels consumers."""
    from platform_core.events.api.stream import EventStreamConsumer

    return [re_path(r"^api/v1/events/stream/?$", EventStreamConsumer.as_asgi())]


def websocket_routes() -> list:
    """WebSocket routes (team-chat presence, typing and live updates; the co-browse relay;
    the dashboard's live feed)."""
    from conversations.consumers import CobrowseConsumer
    from conversations.team_chat.consumers import TeamChatConsumer
    from dashboard.consumers import DashboardLiveConsumer

    return [
        re_path(r"^ws/team-chat/?$", TeamChatConsumer.as_asgi()),
        re_path(r"^ws/dashboard/?$", DashboardLiveConsumer.as_asgi()),
        re_path(r"^ws/cobrowse/(?P<session_id>[A-Za-z0-9_]+)/?$", CobrowseConsumer.as_asgi()),
    ]
