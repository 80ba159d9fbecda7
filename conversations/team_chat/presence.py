"""Presence: heartbeats kept in Redis, never in the database (Document 2, 4.9).

One hash per organization, `<prefix>:tc:presence:<org>`, maps a user id to
`<status>|<unix time of the last heartbeat>`. A user is online (or away) while their last
heartbeat is younger than TEAM_CHAT_PRESENCE_TTL_SECONDS (60: clients beat about every
25 s), offline after; the last heartbeat stays as `last_seen_at`. The store is
TEAM_CHAT_PRESENCE_REDIS_URL (default REDIS_URL); without one, a dictionary in this
process (the embedded single-process run).

Degrade open: when Redis is unreachable the heartbeat still answers 200 (`degraded: true`)
and the snapshot answers an empty list, so a presence outage never breaks the chat.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass
from datetime import UTC, datetime

import redis
from django.conf import settings

from platform_core.api.serialization import iso_utc

from . import conf

logger = logging.getLogger("team_chat.presence")

STATUSES = ("online", "away")
_KEEP_SECONDS = 30 * 86400  # the hash (and so last_seen_at) outlives 30 idle days


class PresenceUnavailable(Exception):
    pass


@dataclass(frozen=True)
class Entry:
    user_id: str
    status: str  # online, away, offline
    online: bool
    last_seen_at: datetime | None
    degraded: bool = False

    def as_dict(self) -> dict:
        seen = self.last_seen_at
        return {"user_id": self.user_id, "status": self.status, "online": self.online,
                "last_seen_at": iso_utc(seen) if seen else None}


class _LocalStore:
    """The embedded default: one process, one dictionary."""

    def __init__(self) -> None:
        self.data: dict[str, dict[str, str]] = {}
        self.lock = threading.Lock()

    def set(self, key: str, user_id: str, value: str) -> str | None:
        with self.lock:
            bucket = self.data.setdefault(key, {})
            previous = bucket.get(user_id)
            bucket[user_id] = value
            return previous

    def get_many(self, key: str, user_ids: list[str]) -> list[str | None]:
        with self.lock:
            bucket = self.data.get(key, {})
            return [bucket.get(u) for u in user_ids]


class _RedisStore:
    def __init__(self, url: str) -> None:
        # Short timeouts: an outage must degrade the answer, not hang it.
        self.client = redis.Redis.from_url(url, socket_connect_timeout=0.5, socket_timeout=0.5,
                                           retry_on_timeout=False)

    def set(self, key: str, user_id: str, value: str) -> str | None:
        try:
            pipe = self.client.pipeline()
            pipe.hget(key, user_id)
            pipe.hset(key, user_id, value)
            pipe.expire(key, _KEEP_SECONDS)
            previous = pipe.execute()[0]
        except redis.RedisError as error:
            raise PresenceUnavailable(str(error)) from error
        return previous.decode() if previous is not None else None

    def get_many(self, key: str, user_ids: list[str]) -> list[str | None]:
        if not user_ids:
            return []
        try:
            values = self.client.hmget(key, user_ids)
        except redis.RedisError as error:
            raise PresenceUnavailable(str(error)) from error
        return [v.decode() if v is not None else None for v in values]


_stores: dict[str, object] = {}
_stores_lock = threading.Lock()


def _store():
    url = conf.presence_redis_url()
    with _stores_lock:
        store = _stores.get(url)
        if store is None:
            store = _stores[url] = _RedisStore(url) if url else _LocalStore()
        return store


def _key(org_id: str) -> str:
    return f"{settings.CACHE_KEY_PREFIX}:tc:presence:{org_id}"


def _entry(user_id: str, raw: str | None, now: float) -> Entry:
    if not raw:
        return Entry(user_id, "offline", False, None)
    status, _, seen = raw.partition("|")
    try:
        seen_at = float(seen)
    except ValueError:
        return Entry(user_id, "offline", False, None)
    live = now - seen_at < conf.presence_ttl()
    return Entry(user_id, status if live else "offline", live,
                 datetime.fromtimestamp(seen_at, tz=UTC))


def heartbeat(*, org_id: str, user_id: str, status: str) -> tuple[Entry, bool]:
    """Record a heartbeat; answers the caller's entry and whether their presence changed
    (offline → online/away, or online ↔ away): only changes are pushed to sockets."""
    now = time.time()
    try:
        previous = _store().set(_key(org_id), user_id, f"{status}|{now:.3f}")
    except PresenceUnavailable:
        logger.warning("presence store unavailable; heartbeat of %s not kept", user_id)
        return Entry(user_id, status, True, datetime.fromtimestamp(now, tz=UTC),
                     degraded=True), False
    before = _entry(user_id, previous, now)
    return _entry(user_id, f"{status}|{now}", now), before.status != status


def snapshot(*, org_id: str, user_ids: list[str]) -> list[Entry] | None:
    """Entries of `user_ids` in that order; None when the store is unreachable."""
    now = time.time()
    try:
        values = _store().get_many(_key(org_id), user_ids)
    except PresenceUnavailable:
        logger.warning("presence store unavailable; snapshot degraded")
        return None
    return [_entry(u, v, now) for u, v in zip(user_ids, values, strict=True)]
