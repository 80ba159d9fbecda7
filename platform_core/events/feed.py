"""The recent-event feed (Document 1, 2.5, 4.5 and 6.2): a bounded per-tenant window.

In Redis (production and tests) each organization has three keys sharing a hash tag:
a sorted set of event ids scored by their *feed position*, a hash of id to envelope, and
the last position given out. Positions are microsecond timestamps from the Redis clock,
strictly increasing per organization, assigned atomically when an event enters the
window: an event's position is always above every position assigned before it, so
"every event after position p" is gap-free (what SSE resume relies on). Each entry also
remembers the position of the entry before it (`prev`), which lets a stream subscriber
see from one message alone whether it missed one.

The window keeps the newest `EVENTS_FEED_MAX_EVENTS` (5000) and all three keys expire
after `EVENTS_FEED_TTL_SECONDS` (15 minutes) without a new event: every new event
refreshes them. Appending is idempotent (a re-dispatched event keeps its position).

Without Redis (the embedded default) the window is read from the outbox table instead,
with the same limits; it then has no `prev` chain and streams poll it.

Every read raises `FeedUnavailable` when the store cannot be reached; the API degrades
open on it (an empty page, 404).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import orjson
import redis
from django.conf import settings
from django.utils import timezone

from . import conf

logger = logging.getLogger("platform_core.events")


class FeedUnavailable(Exception):
    """The real-time store cannot be reached."""


@dataclass(frozen=True, slots=True)
class Entry:
    position: int
    envelope: dict[str, Any]
    prev: int | None = None


# KEYS: window zset, envelopes hash, last position. ARGV: id, envelope json, max, ttl.
# Returns {prev, position} as strings.
_APPEND_LUA = """
local existing = redis.call('ZSCORE', KEYS[1], ARGV[1])
if existing then
  local stored = redis.call('HGET', KEYS[2], ARGV[1])
  local prev = '0'
  if stored then
    prev = string.sub(stored, 1, string.find(stored, '|', 1, true) - 1)
  end
  return {prev, existing}
end
local t = redis.call('TIME')
local pos = tonumber(t[1]) * 1000000 + tonumber(t[2])
local last = tonumber(redis.call('GET', KEYS[3]) or '0')
if pos <= last then pos = last + 1 end
local prev = string.format('%d', last)
local position = string.format('%d', pos)
local ttl = tonumber(ARGV[4])
redis.call('ZADD', KEYS[1], position, ARGV[1])
redis.call('HSET', KEYS[2], ARGV[1], prev .. '|' .. ARGV[2])
redis.call('SET', KEYS[3], position, 'EX', ttl)
local size = redis.call('ZCARD', KEYS[1])
local max = tonumber(ARGV[3])
if size > max then
  local old = redis.call('ZRANGE', KEYS[1], 0, size - max - 1)
  redis.call('ZREMRANGEBYRANK', KEYS[1], 0, size - max - 1)
  for i = 1, #old, 500 do
    redis.call('HDEL', KEYS[2], unpack(old, i, math.min(i + 499, #old)))
  end
end
redis.call('EXPIRE', KEYS[1], ttl)
redis.call('EXPIRE', KEYS[2], ttl)
return {prev, position}
"""

_clients: dict[str, redis.Redis] = {}
_scripts: dict[str, Any] = {}


def _client(url: str) -> redis.Redis:
    client = _clients.get(url)
    if client is None:
        client = _clients[url] = redis.Redis.from_url(
            url, socket_connect_timeout=1, socket_timeout=2, health_check_interval=30
        )
    return client


def _position(raw: Any) -> int:
    if isinstance(raw, bytes):
        raw = raw.decode()
    return int(float(raw)) if not isinstance(raw, int) else raw


class RedisFeed:
    def __init__(self, url: str) -> None:
        self.url = url
        self.prefix = getattr(settings, "CACHE_KEY_PREFIX", "engage")

    @property
    def client(self) -> redis.Redis:
        return _client(self.url)

    def _keys(self, org_id: str) -> tuple[str, str, str]:
        base = f"{self.prefix}:feed:{{{org_id}}}"
        return f"{base}:z", f"{base}:h", f"{base}:last"

    @staticmethod
    def _parse(stored: bytes) -> tuple[int, dict[str, Any]]:
        prev, _, body = stored.partition(b"|")
        return int(prev), orjson.loads(body)

    def append(self, event) -> Entry:
        return self.append_many([event])[0]

    def append_many(self, events) -> list[Entry]:
        """Append events in order, in one round trip (a pipeline of the append script)."""
        script = _scripts.get(self.url)
        if script is None:
            script = _scripts[self.url] = self.client.register_script(_APPEND_LUA)
        envelopes = [event.envelope() for event in events]
        max_events, ttl = conf.feed_max_events(), conf.feed_ttl_seconds()
        try:
            pipe = self.client.pipeline(transaction=False)
            for event, envelope in zip(events, envelopes, strict=True):
                script(keys=list(self._keys(event.organization_id)),
                       args=[event.pk, orjson.dumps(envelope), max_events, ttl], client=pipe)
            answers = pipe.execute()
        except redis.RedisError as exc:
            raise FeedUnavailable(str(exc)) from exc
        return [Entry(position=_position(position), envelope=envelope, prev=_position(prev))
                for envelope, (prev, position) in zip(envelopes, answers, strict=True)]

    def get(self, org_id: str, event_id: str) -> Entry | None:
        zkey, hkey, _ = self._keys(org_id)
        try:
            pipe = self.client.pipeline(transaction=False)
            pipe.zscore(zkey, event_id)
            pipe.hget(hkey, event_id)
            score, stored = pipe.execute()
        except redis.RedisError as exc:
            raise FeedUnavailable(str(exc)) from exc
        if score is None or stored is None:
            return None
        prev, envelope = self._parse(stored)
        return Entry(position=_position(score), envelope=envelope, prev=prev)

    def head(self, org_id: str) -> int:
        try:
            raw = self.client.get(self._keys(org_id)[2])
        except redis.RedisError as exc:
            raise FeedUnavailable(str(exc)) from exc
        return _position(raw) if raw is not None else 0

    def size(self, org_id: str) -> int:
        try:
            return int(self.client.zcard(self._keys(org_id)[0]))
        except redis.RedisError as exc:
            raise FeedUnavailable(str(exc)) from exc

    def _entries(self, hkey: str, scored: list[tuple[bytes, float]]) -> list[Entry]:
        if not scored:
            return []
        stored = self.client.hmget(hkey, [member for member, _ in scored])
        entries = []
        for (_, score), value in zip(scored, stored, strict=True):
            if value is None:  # trimmed in between
                continue
            prev, envelope = self._parse(value)
            entries.append(Entry(position=_position(score), envelope=envelope, prev=prev))
        return entries

    def page(
        self, org_id: str, *, before: int | None, limit: int, types: frozenset[str] = frozenset()
    ) -> tuple[list[Entry], bool]:
        """Newest first, strictly below `before`; `has_more` when more match below."""
        zkey, hkey, _ = self._keys(org_id)
        chunk = limit + 1 if not types else max(200, (limit + 1) * 4)
        upper = f"({before}" if before is not None else "+inf"
        found: list[Entry] = []
        try:
            while True:
                scored = self.client.zrevrangebyscore(
                    zkey, upper, "-inf", start=0, num=chunk, withscores=True
                )
                for entry in self._entries(hkey, scored):
                    if types and entry.envelope.get("type") not in types:
                        continue
                    found.append(entry)
                    if len(found) > limit:
                        break
                if len(found) > limit or len(scored) < chunk:
                    break
                upper = f"({_position(scored[-1][1])}"
        except redis.RedisError as exc:
            raise FeedUnavailable(str(exc)) from exc
        return found[:limit], len(found) > limit

    def after(self, org_id: str, position: int, upto: int | None = None,
              limit: int | None = None) -> list[Entry]:
        """Oldest first, strictly after `position` and up to `upto` included."""
        zkey, hkey, _ = self._keys(org_id)
        upper = str(upto) if upto is not None else "+inf"
        try:
            kwargs = {"start": 0, "num": limit} if limit else {}
            scored = self.client.zrangebyscore(
                zkey, f"({position}", upper, withscores=True, **kwargs
            )
            return self._entries(hkey, scored)
        except redis.RedisError as exc:
            raise FeedUnavailable(str(exc)) from exc


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICRO = timedelta(microseconds=1)


def _micros(moment: datetime) -> int:
    return (moment - _EPOCH) // _MICRO


def _moment(micros: int) -> datetime:
    return _EPOCH + timedelta(microseconds=micros)


class DatabaseFeed:
    """The embedded default: the window is the newest outbox rows of a still-active tenant."""

    def _window(self, org_id: str):
        from .models import Event

        rows = Event.objects.dangerously_unscoped().filter(organization_id=org_id)
        newest = rows.order_by("-created_at").values_list("created_at", flat=True).first()
        if newest is None or newest < timezone.now() - timedelta(seconds=conf.feed_ttl_seconds()):
            return rows.none(), None
        cap = conf.feed_max_events()
        newest_first = rows.order_by("-created_at").values_list("created_at", flat=True)
        floor = list(newest_first[cap - 1 : cap])
        if floor:
            rows = rows.filter(created_at__gte=floor[0])
        return rows, newest

    @staticmethod
    def _entry(event) -> Entry:
        return Entry(position=_micros(event.created_at), envelope=event.envelope())

    def append(self, event) -> Entry:
        return self._entry(event)

    def append_many(self, events) -> list[Entry]:
        return [self._entry(event) for event in events]

    def get(self, org_id: str, event_id: str) -> Entry | None:
        rows, _ = self._window(org_id)
        event = rows.filter(pk=event_id).first()
        return self._entry(event) if event else None

    def head(self, org_id: str) -> int:
        _, newest = self._window(org_id)
        return _micros(newest) if newest else 0

    def size(self, org_id: str) -> int:
        rows, _ = self._window(org_id)
        return rows.count()

    def page(self, org_id: str, *, before: int | None, limit: int,
             types: frozenset[str] = frozenset()) -> tuple[list[Entry], bool]:
        rows, _ = self._window(org_id)
        if before is not None:
            rows = rows.filter(created_at__lt=_moment(before))
        if types:
            rows = rows.filter(type__in=types)
        events = list(rows.order_by("-created_at", "-id")[: limit + 1])
        return [self._entry(e) for e in events[:limit]], len(events) > limit

    def after(self, org_id: str, position: int, upto: int | None = None,
              limit: int | None = None) -> list[Entry]:
        rows, _ = self._window(org_id)
        rows = rows.filter(created_at__gt=_moment(position))
        if upto is not None:
            rows = rows.filter(created_at__lte=_moment(upto))
        rows = rows.order_by("created_at", "id")
        return [self._entry(e) for e in (rows[:limit] if limit else rows)]


def get_feed() -> RedisFeed | DatabaseFeed:
    url = conf.feed_redis_url()
    return RedisFeed(url) if url else DatabaseFeed()
