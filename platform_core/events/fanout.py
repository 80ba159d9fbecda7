"""Fan-out handlers of the events family: the recent-event feed and live stream subscribers.

Both are idempotent: the feed keeps an event's first position when it is appended again,
and stream subscribers drop a position they have already sent. Each has a batch form: a
claimed batch is appended to the feed in one Redis round trip.
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
    feed_fanout_batch([event])


def feed_fanout_batch(events: list[Event]) -> None:
    get_feed().append_many(events)


def stream_fanout(event: Event) -> None:
    stream_fanout_batch([event])


def stream_fanout_batch(events: list[Event]) -> None:
    layer = get_channel_layer()
    if layer is None:
        return
    # Idempotent: the positions the feed handler assigned.
    entries = get_feed().append_many(events)

    async def publish() -> None:
        for event, entry in zip(events, entries, strict=True):
            await layer.group_send(stream_group(event.organization_id), {
                "type": STREAM_MESSAGE_TYPE,
                "envelope": entry.envelope,
                "position": entry.position,
                "prev": entry.prev,
            })

    async_to_sync(publish)()
