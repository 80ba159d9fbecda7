"""The webhooks fan-out handler plugged into the event bus (see apps.py)."""

from __future__ import annotations

from . import services


def webhooks_fanout(event) -> None:
    """Create the deliveries of `event` for every subscribed endpoint (idempotent)."""
    services.deliveries_create_for_events([event])


def webhooks_fanout_batch(events) -> None:
    """The same for a claimed batch of events: one INSERT for all their deliveries."""
    services.deliveries_create_for_events(events)
