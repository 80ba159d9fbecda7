"""Channels routes: the SSE stream (HTTP) and WebSockets, served by daphne.

Each app that serves a stream or socket adds its route here.
"""

from __future__ import annotations


def http_routes() -> list:
    """Long-lived HTTP routes (Server-Sent Events) handled by Channels consumers."""
    return []


def websocket_routes() -> list:
    """WebSocket routes (team-chat presence and typing)."""
    return []
