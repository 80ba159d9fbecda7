"""A process-local copy of credential snapshots, invalidated over Redis pub/sub.

Authentication reads a credential's snapshot on every request. The shared cache (Redis)
holds it for every process; this module keeps a copy in the process as well, so that the
steady state costs no network round trip at all.

Revocation stays immediate: every `credentials.forget_*` deletes the shared entry, drops
the local copy and publishes the cache keys on one channel. Each process runs a listener
thread that drops the keys it is told about. The local copy is only used while that
listener is subscribed: before the subscription is confirmed, after a disconnect (messages
may have been missed: everything is dropped), and with a cache that is not Redis (the
embedded default), every read goes to the shared cache as before. A short TTL bounds what
a lost message could ever cost.

A read that races an invalidation must not re-insert what it read before the
invalidation: `generation()` is taken before the shared read and `put()` refuses the value
when any invalidation arrived in between.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from typing import Any

from django.core.cache import cache

from platform_core.shared_cache import redis_client

logger = logging.getLogger(__name__)

TTL_SECONDS = 30.0
MAX_ENTRIES = 10_000
_CHANNEL = "auth:invalidate"

_entries: dict[str, tuple[Any, float]] = {}
_generation = 0
_subscribed = False
_listener_pid: int | None = None
_start_lock = threading.Lock()


def _channel() -> str:
    return cache.make_key(_CHANNEL)


def _ensure_listener() -> None:
    """Start this process's listener (once per process: a forked worker starts its own)."""
    global _listener_pid
    pid = os.getpid()
    if _listener_pid == pid:
        return
    with _start_lock:
        if _listener_pid == pid:
            return
        _reset(subscribed=False)
        _listener_pid = pid
        if redis_client() is None:
            return  # no shared pub/sub: the local copy stays off
        thread = threading.Thread(target=_listen, name="auth-invalidation", daemon=True)
        thread.start()


def _reset(*, subscribed: bool) -> None:
    global _generation, _subscribed
    _subscribed = False
    _generation += 1
    _entries.clear()
    _subscribed = subscribed


def _listen() -> None:
    backoff = 0.1
    while True:
        pubsub = None
        try:
            pubsub = redis_client().pubsub(ignore_subscribe_messages=False)
            pubsub.subscribe(_channel())
            for message in pubsub.listen():
                if message["type"] == "subscribe":
                    _reset(subscribed=True)  # whatever was published before is unknown
                    backoff = 0.1
                elif message["type"] == "message":
                    _drop_local(message["data"].decode().split("\n"))
        except Exception:  # any disconnect: the local copy is off until resubscribed
            logger.warning("credential invalidation listener lost Redis; retrying", exc_info=True)
        finally:
            _reset(subscribed=False)
            if pubsub is not None:
                with contextlib.suppress(Exception):  # closing a broken connection
                    pubsub.close()
        time.sleep(backoff)
        backoff = min(backoff * 2, 5.0)


def _drop_local(keys: list[str]) -> None:
    global _generation
    _generation += 1
    for key in keys:
        _entries.pop(key, None)


def generation() -> int:
    return _generation


def get(key: str) -> Any | None:
    """The local copy of `key`, or None (absent, expired, or the listener is not live)."""
    _ensure_listener()
    if not _subscribed:
        return None
    found = _entries.get(key)
    if found is None:
        return None
    value, expires = found
    if expires < time.monotonic():
        _entries.pop(key, None)
        return None
    return value


def put(key: str, value: Any, seen_generation: int) -> None:
    """Keep `value`, read after `generation()` returned `seen_generation`."""
    if not _subscribed or seen_generation != _generation:
        return
    if len(_entries) >= MAX_ENTRIES:
        _entries.clear()
    _entries[key] = (value, time.monotonic() + TTL_SECONDS)


def invalidate(keys: list[str]) -> None:
    """Drop `keys` here and tell every other process to drop them."""
    _drop_local(keys)
    client = redis_client()
    if client is not None and keys:
        client.publish(_channel(), "\n".join(keys))
