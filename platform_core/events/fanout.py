"""Fan-out handlers of the events family: the recent-event feed and live stream subscribers.

Both are idempotent: the feed keeps an event's first position when it is appended again,
and stream subscribers drop a position they have already sent.
"""

from __future__ import annotations

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer

from .feed import get_feed
from .models import Event

STREAM_MESSAGE_TYPE = "events.message"


def stream_group(org_id: str) -> str:
    """The channel-layer group of an organization's live stream subscribers."""
    return f"events.{org_id}"


def feed_fanout(event: Event) -> None:
    get_feed().append(event)


def stream_fanout(event: Event) -> None:
    layer = get_channel_layer()
    if layer is None:
        return
    entry = get_feed().append(event)  # idempotent: the position the feed handler assigned
    async_to_sync(layer.group_send)(
        stream_group(event.organization_id),
        {
            "type": STREAM_MESSAGE_TYPE,
            "envelope": entry.envelope,
            "position": entry.position,
            "prev": entry.prev,
        },
    )
