"""Live updates: what services publish to the WebSocket subscribers (consumers.py).

Every event goes to a channel-layer group (the `team_chat` layer: Redis pub/sub when
REDIS_URL is set, in-process otherwise) that holds only the sockets allowed to see it:
- `tc.c.<channel id>`: the sockets of the channel's members (joined on connect, and on
  `member.added` through the user's group; left on `member.removed`);
- `tc.u.<user id>`: every socket of one user (DMs go to both participants' groups);
- `tc.o.<organization id>`: presence changes of the organization's users.
Publishing happens after the transaction commits and never fails the request: a live
update is a convenience, the REST API stays the record.
"""

from __future__ import annotations

import logging
from typing import Any

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.db import transaction

logger = logging.getLogger("team_chat.live")

LAYER = "team_chat"
EVENT = "team_chat.event"  # consumer handler team_chat_event
CONTROL = "team_chat.control"  # consumer handler team_chat_control (join/leave groups)


def channel_group(channel_id: str) -> str:
    return f"tc.c.{channel_id}"


def user_group(user_id: str) -> str:
    return f"tc.u.{user_id}"


def org_group(org_id: str) -> str:
    return f"tc.o.{org_id}"


def layer():
    return get_channel_layer(LAYER)


async def send_now(groups: list[str], message: dict[str, Any]) -> None:
    channel_layer = layer()
    if channel_layer is None:
        return
    for group in groups:
        await channel_layer.group_send(group, message)


def _send(groups: list[str], message: dict[str, Any]) -> None:
    try:
        async_to_sync(send_now)(groups, message)
    except Exception:  # the layer's store is down: live updates pause, requests go on
        logger.warning("team chat live update not published", exc_info=True)


def publish(groups: list[str], event: dict[str, Any]) -> None:
    """Send `event` to the sockets of `groups` once the current transaction commits."""
    message = {"type": EVENT, "event": event}
    transaction.on_commit(lambda: _send(groups, message))


def control(user_id: str, action: str, channel_id: str, event: dict[str, Any]) -> None:
    """Make every socket of `user_id` join or leave a channel's group (after commit), then
    pass it `event` (its own member.added / member.removed / channel.deleted)."""
    message = {"type": CONTROL, "action": action, "channel_id": channel_id, "event": event}
    transaction.on_commit(lambda: _send([user_group(user_id)], message))
