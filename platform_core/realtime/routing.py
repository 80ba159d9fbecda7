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
    """WebSocket routes (team-chat presence and typing)."""
    return []
