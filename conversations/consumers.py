"""The co-browse relay: a WebSocket room per session at `/ws/cobrowse/<session_id>/`.

Each side connects with the token it was given (`?token=`): the visitor's from the widget
start, the agent's from join. Visitor messages (DOM events, any JSON object) go to the
agents in the room; an agent may send only `{"type": "control", ...}` messages, and only
when its token grants control. Ending the session closes every socket of the room.
"""

from __future__ import annotations

from urllib.parse import parse_qs

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer

from . import cobrowse
from .side_models import CobrowseSession, CobrowseStatus

CLOSE_UNAUTHORIZED = 4401
CLOSE_ENDED = 4410


@database_sync_to_async
def _session_open(claims: dict) -> bool:
    return CobrowseSession.objects.dangerously_unscoped().filter(
        pk=claims["s"], organization_id=claims["o"], conversation_id=claims["c"]
    ).exclude(status=CobrowseStatus.ENDED).exists()


class CobrowseConsumer(AsyncJsonWebsocketConsumer):
    async def connect(self) -> None:
        self.session_id = self.scope["url_route"]["kwargs"]["session_id"]
        query = parse_qs(self.scope.get("query_string", b"").decode())
        claims = cobrowse.read_token((query.get("token") or [""])[0],
                                     session_id=self.session_id)
        if claims is None or not await _session_open(claims):
            await self.close(code=CLOSE_UNAUTHORIZED)
            return
        self.role = claims["r"]
        self.control = bool(claims.get("ctl"))
        self.group = cobrowse.group_name(self.session_id)
        await self.channel_layer.group_add(self.group, self.channel_name)
        await self.accept()

    async def disconnect(self, code) -> None:
        group = getattr(self, "group", None)
        if group:
            await self.channel_layer.group_discard(group, self.channel_name)

    async def receive_json(self, content, **kwargs) -> None:
        if not isinstance(content, dict):
            await self.send_json({"type": "error", "code": "VALIDATION_ERROR",
                                  "message": "Send JSON objects."})
            return
        if self.role == "agent":
            if content.get("type") != "control":
                await self.send_json({"type": "error", "code": "VALIDATION_ERROR",
                                      "message": "An agent sends control events only."})
                return
            if not self.control:
                await self.send_json({"type": "error", "code": "COBROWSE_CONTROL_NOT_GRANTED",
                                      "message": "Control was not granted for this session."})
                return
        await self.channel_layer.group_send(
            self.group, {"type": "relay", "from_role": self.role, "event": content})

    async def relay(self, message) -> None:
        if message["from_role"] != self.role:  # never echoed to the sender's own side
            await self.send_json({"from": message["from_role"], "event": message["event"]})

    async def session_ended(self, message) -> None:
        await self.send_json({"type": "session.ended"})
        await self.close(code=CLOSE_ENDED)
