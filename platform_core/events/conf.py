"""Tunables of the events family, read from Django settings with these defaults.

    EVENTS_FEED_MAX_EVENTS            newest events kept per tenant in the feed (5000)
    EVENTS_FEED_TTL_SECONDS           the feed expires after this much tenant inactivity (900)
    EVENTS_FEED_REDIS_URL             Redis of the feed (default REDIS_URL; empty: the
                                      embedded database-backed feed)
    EVENTS_STREAM_HEARTBEAT_SECONDS   comment line sent on idle SSE streams (15)
    EVENTS_STREAM_POLL_SECONDS        SSE streams also poll the feed this often; 0 = only
                                      the channel layer (default: 0 with Redis, 1 without)
    EVENTS_REDISPATCH_AFTER_SECONDS   outbox rows not fanned out after this are re-dispatched (30)
    EVENTS_MAX_DISPATCH_ATTEMPTS      the re-dispatch scan gives up on an event after this (25)
    EVENTS_OUTBOX_RETENTION_DAYS      outbox rows are deleted after this many days (30)
"""

from __future__ import annotations

from django.conf import settings


def feed_max_events() -> int:
    return int(getattr(settings, "EVENTS_FEED_MAX_EVENTS", 5000))


def feed_ttl_seconds() -> int:
    return int(getattr(settings, "EVENTS_FEED_TTL_SECONDS", 15 * 60))


def feed_redis_url() -> str:
    url = getattr(settings, "EVENTS_FEED_REDIS_URL", None)
    if url is None:
        url = getattr(settings, "REDIS_URL", "")
    return url or ""


def stream_heartbeat_seconds() -> float:
    return float(getattr(settings, "EVENTS_STREAM_HEARTBEAT_SECONDS", 15.0))


def stream_poll_seconds() -> float:
    value = getattr(settings, "EVENTS_STREAM_POLL_SECONDS", None)
    if value is None:
        return 0.0 if feed_redis_url() else 1.0
    return float(value)


def redispatch_after_seconds() -> int:
    return int(getattr(settings, "EVENTS_REDISPATCH_AFTER_SECONDS", 30))


def max_dispatch_attempts() -> int:
    return int(getattr(settings, "EVENTS_MAX_DISPATCH_ATTEMPTS", 25))


def outbox_retention_days() -> int:
    return int(getattr(settings, "EVENTS_OUTBOX_RETENTION_DAYS", 30))
