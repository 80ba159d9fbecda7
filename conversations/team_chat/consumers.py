"""`/ws/team-chat/`: live team-chat updates over a WebSocket (served by daphne).

Authentication: the session JWT as `?token=<jwt>` (browsers cannot set headers on a
WebSocket) or an `Authorization: Bearer` header; an API key (`X-API-Key` or `?token=`)
acts as its creating user, as on the REST API; or, from the dashboard, its session cookie
(same-origin handshakes only). A refused connection is accepted, sent one
`{"type": "error", "error": {code, message}}` frame and closed with 4401 (credentials) or
4403 (permissions) or 4503 (no channel layer).

On connect the socket joins the groups of its user, organization and channels (live.py)
and receives `{"type": "ready", "user_id", "channel_ids"}`. Server → client frames are the
events services publish: `message.created`, `message.updated`, `message.deleted`,
`thread.reply`, `member.added`, `member.removed`, `channel.updated`, `channel.deleted`,
`huddle.*`, `typing`, `presence`. Client → server frames:
- `{"type": "typing", "channel_id"}` or `{"type": "typing", "thread_id"}` (a DM): sent on
  as `{"type": "typing", "channel_id"|"thread_id", "user_id"}` to the members only;
- `{"type": "heartbeat", "status": "online"|"away"}`: the same heartbeat as
  `POST /presence/heartbeat`, answered with `{"type": "presence.ack", ...entry}`;
- `{"type": "ping"}`: answered `{"type": "pong"}`.
A frame that is not one of these answers an error frame and the socket stays open.
"""

from __future__ import annotations

import json
import logging
from types import SimpleNamespace
from urllib.parse import parse_qs

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer
from django.db.models import Q

from platform_core.api.authentication import PlatformAuthentication
from platform_core.api.permissions import require_scope
from platform_core.errors import APIError
from platform_core.identity import dashboard_cookie

from . import live, presence
from .actors import acting_user_id
from .models import ChannelMember, DMThread

logger = logging.getLogger("team_chat.ws")

SCOPE = "conversations:read"


def _meta(scope) -> dict[str, str]:
    """A WSGI-style META from the ASGI scope, for the shared authentication class."""
    meta: dict[str, str] = {}
    for raw_name, raw_value in scope.get("headers", []):
        key = "HTTP_" + raw_name.decode("latin1").upper().replace("-", "_")
        meta[key] = raw_value.decode("latin1")
    client = scope.get("client")
    if client:
        meta["REMOTE_ADDR"] = client[0]
    query = parse_qs(scope.get("query_string", b"").decode("latin1"))
    token = query.get("token", [""])[0].strip()
    if token and not meta.get("HTTP_X_API_KEY") and not meta.get("HTTP_AUTHORIZATION"):
        if token.startswith("eyJ"):
            meta["HTTP_AUTHORIZATION"] = f"Bearer {token}"
        else:
            meta["HTTP_X_API_KEY"] = token
    if not meta.get("HTTP_X_API_KEY") and not meta.get("HTTP_AUTHORIZATION"):
        # The dashboard's session cookie (same-origin handshakes only).
        cookie_token = dashboard_cookie.token_from_ws_scope(scope)
        if cookie_token:
            meta["HTTP_AUTHORIZATION"] = f"Bearer {cookie_token}"
    return meta


def _open(meta: dict[str, str]) -> tuple[str, str, list[str]]:
    result = PlatformAuthentication().authenticate(SimpleNamespace(META=meta))
    principal = result[1] if result is not None else None
    require_scope(principal, SCOPE)
    user_id = acting_user_id(principal)
    org = principal.organization
    channel_ids = list(ChannelMember.objects.for_organization(org).filter(user_id=user_id)
                       .values_list("channel_id", flat=True))
    return org.pk, user_id, channel_ids


def _dm_participant(org_id: str, user_id: str, thread_id: str) -> DMThread | None:
    return (DMThread.objects.for_organization_id(org_id).filter(pk=thread_id)
            .filter(Q(user_low_id=user_id) | Q(user_high_id=user_id)).first())


class TeamChatConsumer(AsyncJsonWebsocketConsumer):
    channel_layer_alias = live.LAYER

    async def connect(self) -> None:
        self.user_id: str | None = None
        self.joined: set[str] = set()
        self.channel_ids: set[str] = set()
        try:
            self.org_id, self.user_id, channel_ids = await database_sync_to_async(_open)(
                _meta(self.scope))
        except APIError as error:
            await self._refuse(error, 4401 if error.status == 401 else 4403)
            return
        if self.channel_layer is None:
            await self._refuse(APIError("SERVICE_UNAVAILABLE", "No channel layer."), 4503)
            return
        await self._join(live.user_group(self.user_id))
        await self._join(live.org_group(self.org_id))
        for channel_id in channel_ids:
            await self._join(live.channel_group(channel_id))
            self.channel_ids.add(channel_id)
        await self.accept()
        await self.send_json({"type": "ready", "user_id": self.user_id,
                              "channel_ids": sorted(self.channel_ids)})

    async def _refuse(self, error: APIError, code: int) -> None:
        await self.accept()
        await self.send_json({"type": "error",
                              "error": {"code": error.code, "message": error.message}})
        await self.close(code=code)

    async def _join(self, group: str) -> None:
        await self.channel_layer.group_add(group, self.channel_name)
        self.joined.add(group)

    async def disconnect(self, code) -> None:
        for group in list(self.joined):
            try:
                await self.channel_layer.group_discard(group, self.channel_name)
            except Exception:  # the layer may be gone; memberships expire with it
                logger.warning("could not leave %s", group)
        self.joined.clear()

    # --- Client frames ---------------------------------------------------------------

    async def receive(self, text_data=None, bytes_data=None, **kwargs) -> None:
        try:
            content = json.loads(text_data or (bytes_data or b"").decode("utf-8", "replace"))
        except ValueError:
            await self._error("Frames are JSON objects.")
            return
        if not isinstance(content, dict) or self.user_id is None:
            await self._error("Frames are JSON objects with a `type`.")
            return
        kind = content.get("type")
        if kind == "ping":
            await self.send_json({"type": "pong"})
        elif kind == "typing":
            await self._typing(content)
        elif kind == "heartbeat":
            await self._heartbeat(content)
        else:
            await self._error("Unknown frame type; expected typing, heartbeat or ping.")

    async def _error(self, message: str, code: str = "VALIDATION_ERROR") -> None:
        await self.send_json({"type": "error", "error": {"code": code, "message": message}})

    async def _typing(self, content: dict) -> None:
        channel_id, thread_id = content.get("channel_id"), content.get("thread_id")
        if isinstance(channel_id, str) and channel_id:
            if channel_id not in self.channel_ids:
                await self._error("You are not a member of this channel.", "NOT_A_MEMBER")
                return
            await live.send_now([live.channel_group(channel_id)], {
                "type": live.EVENT, "event": {"type": "typing", "channel_id": channel_id,
                                              "user_id": self.user_id}})
        elif isinstance(thread_id, str) and thread_id:
            thread = await database_sync_to_async(_dm_participant)(
                self.org_id, self.user_id, thread_id)
            if thread is None:
                await self._error("No such DM thread.", "NOT_FOUND")
                return
            await live.send_now(
                [live.user_group(thread.user_low_id), live.user_group(thread.user_high_id)],
                {"type": live.EVENT, "event": {"type": "typing", "thread_id": thread_id,
                                               "user_id": self.user_id}})
        else:
            await self._error("typing needs channel_id or thread_id.")

    async def _heartbeat(self, content: dict) -> None:
        status = content.get("status")
        if status not in presence.STATUSES:
            await self._error("status must be online or away.")
            return
        entry, changed = await database_sync_to_async(presence.heartbeat, thread_sensitive=False)(
            org_id=self.org_id, user_id=self.user_id, status=status)
        data = entry.as_dict()
        if entry.degraded:
            data["degraded"] = True
        elif changed:
            await live.send_now([live.org_group(self.org_id)],
                                {"type": live.EVENT, "event": {"type": "presence", **data}})
        await self.send_json({"type": "presence.ack", **data})

    # --- Channel-layer messages ------------------------------------------------------

    async def team_chat_event(self, message: dict) -> None:
        event = message["event"]
        if (event.get("type") in ("member.added", "member.removed")
                and event.get("user_id") == self.user_id):
            return  # this socket's own membership change comes with its control message
        await self.send_json(event)

    async def team_chat_control(self, message: dict) -> None:
        channel_id = message["channel_id"]
        group = live.channel_group(channel_id)
        if message["action"] == "join":
            await self._join(group)
            self.channel_ids.add(channel_id)
        else:
            self.channel_ids.discard(channel_id)
            self.joined.discard(group)
            await self.channel_layer.group_discard(group, self.channel_name)
        await self.send_json(message["event"])
