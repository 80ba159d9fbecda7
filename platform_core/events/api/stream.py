"""`GET /api/v1/events/stream`: the live event stream as Server-Sent Events (Document 1, 4.5).

Served by daphne through Channels (platform_core.realtime.routing), never by a WSGI worker.

- Authentication exactly as the REST API (`X-API-Key`, then `Authorization: Bearer`, through
  `PlatformAuthentication`); browsers, whose EventSource cannot send headers, pass the key
  as the `token` query parameter, promoted to `X-API-Key` (a session JWT given there is
  promoted to `Authorization: Bearer`). Scope `events:read`.
- Each event is written as `id: <event id>`, `event: <type>`, `data: <envelope JSON on one
  line>`; a comment line (`: keepalive`) is sent after `EVENTS_STREAM_HEARTBEAT_SECONDS`
  without traffic.
- New events arrive from the fan-out through the channel layer group of the organization.
  Each message carries the event's feed position and the position of the event before it,
  so a subscriber that missed one (a full channel, a slow client) notices the gap and reads
  the missing events from the feed; positions only grow, so nothing is sent twice.
- `Last-Event-ID` resumes after that event from the feed window, without loss; an id no
  longer in the window replays the whole window (at least once: deduplicate on `id`).
- Failures before the stream starts answer the JSON error envelope.
"""

from __future__ import annotations

import asyncio
import logging
import time
from types import SimpleNamespace
from urllib.parse import parse_qs

import orjson
from channels.db import database_sync_to_async
from channels.exceptions import StopConsumer
from channels.generic.http import AsyncHttpConsumer

from platform_core.api import ratelimit
from platform_core.api.authentication import PlatformAuthentication
from platform_core.api.envelope import error_body
from platform_core.api.permissions import require_scope
from platform_core.errors import APIError
from platform_core.events import conf
from platform_core.events.fanout import stream_group
from platform_core.events.feed import Entry, FeedUnavailable, get_feed
from platform_core.ids import new_id

logger = logging.getLogger("platform_core.events.stream")

SCOPE = "events:read"
_GROUP_REFRESH_SECONDS = 3600.0
_BACKLOG_CHUNK = 500


def _meta_from_scope(scope) -> dict[str, str]:
    """A WSGI-style META from the ASGI scope, for the shared authentication class."""
    meta: dict[str, str] = {}
    for raw_name, raw_value in scope.get("headers", []):
        name = raw_name.decode("latin1").upper().replace("-", "_")
        value = raw_value.decode("latin1")
        key = f"HTTP_{name}"
        meta[key] = f"{meta[key]},{value}" if key in meta else value
    client = scope.get("client")
    if client:
        meta["REMOTE_ADDR"] = client[0]
    token = parse_qs(scope.get("query_string", b"").decode("latin1")).get("token", [""])[0]
    token = token.strip()
    if token and not meta.get("HTTP_X_API_KEY") and not meta.get("HTTP_AUTHORIZATION"):
        if token.startswith("eyJ"):  # a dashboard session token
            meta["HTTP_AUTHORIZATION"] = f"Bearer {token}"
        else:
            meta["HTTP_X_API_KEY"] = token
    return meta


def _authenticate(meta: dict[str, str]):
    from platform_core.api.authentication import client_ip

    request = SimpleNamespace(META=meta)
    result = PlatformAuthentication().authenticate(request)
    principal = result[1] if result is not None else None
    require_scope(principal, SCOPE)
    counter = getattr(request, "standard_rate_counter", None)
    if counter is not None and counter.count is not None:
        counter.check()  # counted with the credential read
    else:
        ratelimit.enforce(
            [ratelimit.standard_limit("GET")],
            {"credential": principal.rate_limit_identity,
             "organization": principal.organization.pk, "ip": client_ip(request) or "unknown"},
        )
    return principal


def format_event(envelope: dict) -> bytes:
    data = orjson.dumps(envelope)  # one line: orjson never emits raw newlines
    return b"id: %s\nevent: %s\ndata: %s\n\n" % (
        envelope["id"].encode(), envelope["type"].encode(), data)


def _feed_call(fn, *args, **kwargs):
    return database_sync_to_async(fn, thread_sensitive=False)(*args, **kwargs)


class EventStreamConsumer(AsyncHttpConsumer):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.streaming = False
        self.org_id: str | None = None
        self.group: str | None = None
        self.last_position: int | None = None  # None: not synchronized with the feed yet
        self.lock = asyncio.Lock()
        self.ticker: asyncio.Task | None = None
        self.last_write = time.monotonic()
        self.feed = get_feed()

    # --- ASGI plumbing -----------------------------------------------------------------

    async def http_request(self, message):
        if "body" in message:
            self.body.append(message["body"])
        if message.get("more_body"):
            return
        try:
            await self.start()
        except Exception:
            logger.exception("event stream failed to start")
            if not self.streaming:
                await self.send_error(APIError("INTERNAL_ERROR"))
        if not self.streaming:
            await self.disconnect()
            raise StopConsumer()

    async def disconnect(self):
        if self.ticker is not None:
            self.ticker.cancel()
            self.ticker = None
        if self.group is not None:
            try:
                await self.channel_layer.group_discard(self.group, self.channel_name)
            except Exception:  # the layer may be gone; membership expires by itself
                logger.warning("could not leave %s", self.group)
            self.group = None

    def _header(self, name: bytes) -> str:
        for key, value in self.scope.get("headers", []):
            if key.lower() == name:
                return value.decode("latin1")
        return ""

    async def send_error(self, error: APIError) -> None:
        body = error_body(None, error.code, error.message, status=error.status,
                          details=error.details)
        body["meta"]["request_id"] = self.request_id
        headers = [(b"content-type", b"application/json"),
                   (b"x-request-id", self.request_id.encode())]
        headers += [(k.lower().encode(), v.encode()) for k, v in error.headers.items()]
        await self.send_response(error.status, orjson.dumps(body), headers=headers)

    # --- Starting the stream -----------------------------------------------------------

    async def start(self) -> None:
        self.request_id = new_id("req")
        if self.scope.get("method", "GET") != "GET":
            await self.send_error(APIError("METHOD_NOT_ALLOWED", "The event stream is GET only.",
                                           headers={"Allow": "GET"}))
            return
        try:
            principal = await database_sync_to_async(_authenticate)(_meta_from_scope(self.scope))
        except APIError as error:
            await self.send_error(error)
            return
        if self.channel_layer is None:
            await self.send_error(APIError("SERVICE_UNAVAILABLE", "No channel layer configured."))
            return
        self.org_id = principal.organization.pk
        group = stream_group(self.org_id)
        try:
            await self.channel_layer.group_add(group, self.channel_name)
        except Exception:
            logger.exception("channel layer unavailable")
            await self.send_error(APIError("SERVICE_UNAVAILABLE",
                                           "The real-time store is unavailable; retry shortly."))
            return
        self.group = group
        backlog = await self._initial_backlog(self._header(b"last-event-id").strip())
        await self.send_headers(status=200, headers=[
            (b"content-type", b"text/event-stream; charset=utf-8"),
            (b"cache-control", b"no-cache, no-transform"),
            (b"x-accel-buffering", b"no"),
            (b"x-request-id", self.request_id.encode()),
        ])
        self.streaming = True
        # Advise browsers to reconnect after 3 s; they resume with Last-Event-ID.
        await self._write(b"retry: 3000\n: connected\n\n")
        async with self.lock:
            await self._send_entries(backlog)
        self.ticker = asyncio.ensure_future(self._tick())

    async def _initial_backlog(self, last_event_id: str) -> list[Entry]:
        """Where this subscriber starts, and what it must be sent first."""
        try:
            if not last_event_id:
                self.last_position = await _feed_call(self.feed.head, self.org_id)
                return []
            anchor = await _feed_call(self.feed.get, self.org_id, last_event_id)
            self.last_position = anchor.position if anchor else 0
            return await self._read_after(self.last_position)
        except FeedUnavailable as exc:
            logger.warning("event feed unavailable at stream start: %s", exc)
            self.last_position = None
            return []

    async def _read_after(self, position: int, upto: int | None = None) -> list[Entry]:
        entries: list[Entry] = []
        while True:
            chunk = await _feed_call(self.feed.after, self.org_id, position, upto, _BACKLOG_CHUNK)
            entries.extend(chunk)
            if len(chunk) < _BACKLOG_CHUNK:
                return entries
            position = chunk[-1].position

    # --- Sending -----------------------------------------------------------------------

    async def _write(self, data: bytes) -> None:
        await self.send_body(data, more_body=True)
        self.last_write = time.monotonic()

    async def _send_entries(self, entries: list[Entry]) -> None:
        for entry in entries:
            if self.last_position is not None and entry.position <= self.last_position:
                continue  # already sent
            await self._write(format_event(entry.envelope))
            self.last_position = entry.position

    async def dispatch(self, message) -> None:
        # Channels hops to the sync thread to close stale DB connections before every
        # handler; events need no connection (feed reads go through
        # database_sync_to_async, which manages its own), and with hundreds of streams
        # that hop per stream per event dominated delivery time.
        if message.get("type") == "events.message":
            await self.events_message(message)
            return
        await super().dispatch(message)

    async def events_message(self, message) -> None:
        """A new event from the fan-out (channel layer group of the organization)."""
        if not self.streaming:
            return
        entry = Entry(position=message["position"], envelope=message["envelope"],
                      prev=message.get("prev"))
        async with self.lock:
            if self.last_position is None or entry.prev == self.last_position:
                await self._send_entries([entry])
                return
            if entry.position <= self.last_position:
                return
            try:  # a gap: read what came before this event from the feed
                missed = await self._read_after(self.last_position, entry.position)
            except FeedUnavailable:
                missed = []
            if not missed or missed[-1].position != entry.position:
                missed.append(entry)
            await self._send_entries(missed)

    async def _tick(self) -> None:
        """Heartbeats, a periodic catch-up read of the feed, and group membership refresh."""
        heartbeat = conf.stream_heartbeat_seconds()
        poll = conf.stream_poll_seconds()
        interval = min(heartbeat, poll) if poll > 0 else heartbeat
        last_catch_up = last_refresh = time.monotonic()
        try:
            while True:
                await asyncio.sleep(interval)
                now = time.monotonic()
                if poll > 0 or now - last_catch_up >= heartbeat:
                    last_catch_up = now
                    await self._catch_up()
                if now - last_refresh >= _GROUP_REFRESH_SECONDS and self.group:
                    last_refresh = now
                    await self.channel_layer.group_add(self.group, self.channel_name)
                if time.monotonic() - self.last_write >= heartbeat * 0.95:
                    await self._write(b": keepalive\n\n")
        except asyncio.CancelledError:
            raise
        except Exception:
            logger.exception("event stream ticker stopped")

    async def _catch_up(self) -> None:
        async with self.lock:
            try:
                if self.last_position is None:
                    self.last_position = await _feed_call(self.feed.head, self.org_id)
                    return
                await self._send_entries(await self._read_after(self.last_position))
            except FeedUnavailable:
                return
