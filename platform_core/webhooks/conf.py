"""Tunables of the webhooks family, read from Django settings with these defaults.

    WEBHOOK_RETRY_SCHEDULE            seconds between attempts (list or comma string); the
                                      default below spans about 27.6 hours, 10 attempts
    WEBHOOK_RETRY_JITTER              +/- fraction applied to each delay (0.1)
    WEBHOOK_RETRY_AFTER_MAX_SECONDS   a receiver's Retry-After is honored up to this (86400)
    WEBHOOK_TIMEOUT_SECONDS           whole-exchange timeout of one attempt (10)
    WEBHOOK_DELIVERY_LEASE_SECONDS    a claimed delivery is taken over after this if its
                                      worker died (timeout + 5: with the 5 s sweep, within
                                      30 s of the kill at the default timeout)
    WEBHOOK_ENDPOINT_CONCURRENCY      requests in flight per endpoint (and per callback
                                      origin) at most, over every worker (8)
    WEBHOOK_DISABLE_AFTER_SECONDS     an endpoint failing without a success for this long is
                                      disabled (5 days); 0 turns the breaker off
    WEBHOOK_DISABLE_ON_GONE           a 410 Gone answer disables the endpoint at once (True)
    WEBHOOK_REPLAY_WINDOW_SECONDS     failed deliveries can be replayed this long (7 days)
    OUTBOUND_HTTP_THREADS             threads per worker process sending requests (64;
                                      platform_core/net/pool.py)
    OUTBOUND_HTTP_CA_BUNDLE           CA file for verifying receivers' TLS (default certifi)
"""

from __future__ import annotations

from django.conf import settings

# 10 s, 1 min, 5 min, 30 min, 1 h, 2 h, 4 h, 8 h, 12 h: 27.6 hours in all, 10 attempts.
DEFAULT_RETRY_SCHEDULE = (10, 60, 300, 1800, 3600, 7200, 14400, 28800, 43200)


def retry_schedule() -> list[int]:
    value = getattr(settings, "WEBHOOK_RETRY_SCHEDULE", None)
    if isinstance(value, str):
        value = [int(v) for v in value.split(",") if v.strip()]
    return [int(v) for v in value] if value else list(DEFAULT_RETRY_SCHEDULE)


def retry_jitter() -> float:
    return float(getattr(settings, "WEBHOOK_RETRY_JITTER", 0.1))


def retry_after_max_seconds() -> int:
    return int(getattr(settings, "WEBHOOK_RETRY_AFTER_MAX_SECONDS", 24 * 3600))


def timeout_seconds() -> float:
    return float(getattr(settings, "WEBHOOK_TIMEOUT_SECONDS", 10.0))


def lease_seconds() -> float:
    value = getattr(settings, "WEBHOOK_DELIVERY_LEASE_SECONDS", None)
    # Never shorter than one request: a drain does not start a request its lease could
    # not cover (engine.py), so a shorter lease would send nothing at all.
    floor = timeout_seconds() + 1.0
    return max(float(value), floor) if value is not None else timeout_seconds() + 5.0


def disable_after_seconds() -> int:
    return int(getattr(settings, "WEBHOOK_DISABLE_AFTER_SECONDS", 5 * 24 * 3600))


def disable_on_gone() -> bool:
    return bool(getattr(settings, "WEBHOOK_DISABLE_ON_GONE", True))


def replay_window_seconds() -> int:
    return int(getattr(settings, "WEBHOOK_REPLAY_WINDOW_SECONDS", 7 * 24 * 3600))


def endpoint_concurrency() -> int:
    return max(1, int(getattr(settings, "WEBHOOK_ENDPOINT_CONCURRENCY", 8)))
