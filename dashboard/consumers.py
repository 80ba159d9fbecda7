"""`/ws/dashboard`: the dashboard's live feed over a WebSocket (served by daphne).

The browser opens it with the session cookie (same-origin handshakes only; see
`dashboard_cookie.token_from_ws_scope`). It joins the organization's event fan-out group,
the same one the SSE stream reads, and forwards each event envelope as a JSON frame
`{"type": "event", "event": <envelope>}`. Pages react to the frames in dashboard.js (the
inbox refreshes its list and thread, the developers' event feed prepends the event).
The session is checked again every SESSION_RECHECK_SECONDS, so signing out, a revoked
session or a removed membership closes the socket.
"""

from __future__ import annotations

import logging
import time

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer

from platform_core.api.permissions import require_scope
from platform_core.errors import APIError
from platform_core.events.fanout import stream_group
from platform_core.identity import credentials, dashboard_cookie

logger = logging.getLogger("dashboard.ws")

SCOPE = "events:read"
SESSION_RECHECK_SECONDS = 60.0


def _principal(token: str):
    principal = credentials.principal_for_session_token(token)
    require_scope(principal, SCOPE)
    return principal


class DashboardLiveConsumer(AsyncJsonWebsocketConsumer):
    async def connect(self) -> None:
        self.group: str | None = None
        self.token = dashboard_cookie.token_from_ws_scope(self.scope)
        try:
            if not self.token:
                raise APIError("UNAUTHORIZED", "Sign in to the dashboard first.")
            principal = await database_sync_to_async(_principal)(self.token)
        except APIError as error:
            await self.accept()
            await self.send_json({"type": "error",
                                  "error": {"code": error.code, "message": error.message}})
            await self.close(code=4401 if error.status == 401 else 4403)
            return
        self.group = stream_group(principal.organization.pk)
        await self.channel_layer.group_add(self.group, self.channel_name)
        self.checked_at = time.monotonic()
        await self.accept()
        await self.send_json({"type": "ready", "organization": principal.organization.pk})

    async def disconnect(self, code) -> None:
        if self.group is not None:
            try:
                await self.channel_layer.group_discard(self.group, self.channel_name)
            except Exception:  # the layer may be gone; the membership expires with it
                logger.warning("could not leave %s", self.group)
            self.group = None

    async def receive_json(self, content, **kwargs) -> None:
        if isinstance(content, dict) and content.get("type") == "ping":
            await self.send_json({"type": "pong"})

    async def events_message(self, message: dict) -> None:
        """One event of the organization, from the fan-out (platform_core.events.fanout)."""
        if time.monotonic() - self.checked_at > SESSION_RECHECK_SECONDS:
            try:
                await database_sync_to_async(_principal)(self.token)
            except APIError:
                await self.close(code=4401)
                return
            self.checked_at = time.monotonic()
        await self.send_json({"type": "event", "event": message["envelope"]})

