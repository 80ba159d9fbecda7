"""The webhooks fan-out handler plugged into the event bus (see apps.py)."""

from __future__ import annotations

from . import services


def webhooks_fanout(event) -> None:
    """Create the deliveries of `event` for every subscribed endpoint (idempotent)."""
    services.deliveries_create_for_event(event)
