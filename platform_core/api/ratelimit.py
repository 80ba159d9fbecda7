"""Fixed-window rate limits in the shared cache (Redis in production).

Standard buckets: `read` (GET/HEAD/OPTIONS) and `write` (everything else), per credential.
A view may declare extra per-endpoint limits:

    rate_limits = {"POST": [RateLimit("bulk_verify", 2, 60, per="organization")]}

Exceeding any bucket answers 429 `RATE_LIMITED` with `Retry-After`; every response of a
limited request carries `X-RateLimit-Limit`, `-Remaining` and `-Reset` of its tightest bucket.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

from django.conf import settings
from django.core.cache import cache

from platform_core.errors import APIError
from platform_core.shared_cache import redis_client

_READ_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


@dataclass(frozen=True)
class RateLimit:
    name: str
    limit: int
    window_seconds: int = 60
    per: str = "credential"  # "credential", "organization" or "ip"


@dataclass(frozen=True)
class RateState:
    limit: int
    remaining: int
    reset_at: int

    def headers(self) -> dict[str, str]:
        return {
            "X-RateLimit-Limit": str(self.limit),
            "X-RateLimit-Remaining": str(max(self.remaining, 0)),
            "X-RateLimit-Reset": str(self.reset_at),
        }


def standard_limit(method: str) -> RateLimit:
    if method in _READ_METHODS:
        return RateLimit("read", settings.RATE_LIMIT_READ_PER_MINUTE)
    return RateLimit("write", settings.RATE_LIMIT_WRITE_PER_MINUTE)


def _hit_many(keys: list[tuple[str, int]]) -> list[int]:
    """Increment each counter, giving it its window as expiry when new; one round trip."""
    client = redis_client()  # one round trip that both counts and expires
    if client is not None:
        pipe = client.pipeline(transaction=False)
        for key, ttl in keys:
            full = cache.make_key(f"rl:{key}")
            pipe.incr(full)
            pipe.expire(full, ttl, nx=True)
        results = pipe.execute()
        return [int(results[i]) for i in range(0, len(results), 2)]
    counts = []
    for key, ttl in keys:
        cache.add(f"rl:{key}", 0, ttl)
        try:
            counts.append(cache.incr(f"rl:{key}"))
        except ValueError:
            cache.set(f"rl:{key}", 1, ttl)
            counts.append(1)
    return counts


@dataclass
class _Lease:
    """Tokens of one standard bucket window that this process took from Redis in one go."""

    base: int  # the bucket's shared count before this lease
    granted: int
    tokens: int  # granted and not used yet
    size: int  # what was asked for (the next lease doubles it while requests keep coming)
    taken_at: float


# Standard buckets are counted in leases: a process takes several tokens with one INCRBY
# and spends them locally, so a steady stream of requests costs one Redis round trip per
# lease instead of one per request. A lease starts at one token and doubles (up to
# `_lease_cap`) only while its bucket is refilled within a second; a limit is never
# exceeded (a process only spends what Redis granted it), and with one process the counts
# and X-RateLimit-Remaining are exact. What a process leased but did not use within the
# window is lost for that window: at most `_lease_cap` requests per process.
_leases: dict[str, _Lease] = {}
_leases_lock = threading.Lock()  # threaded servers: a token is spent once
_LEASES_MAX = 4096
_LEASE_FAST_SECONDS = 1.0


def _lease_cap(limit: int) -> int:
    return max(1, min(256, limit // 64))


class StandardCounter:
    """The standard bucket of one request, counted in the same cache round trip that reads
    the credential's snapshot (see `read_and_count`), then checked by the base view."""

    def __init__(self, method: str) -> None:
        self.limit = standard_limit(method)
        now = time.time()
        window = int(now // self.limit.window_seconds)
        self.reset_at = (window + 1) * self.limit.window_seconds
        self.window = window
        self.count: int | None = None

    def key(self, identity: str) -> str:
        return f"{self.limit.name}:{identity}:{self.window}"

    def take_leased(self, identity: str) -> bool:
        """Count this request against a token this process already holds, if any."""
        with _leases_lock:
            lease = _leases.get(self.key(identity))
            if lease is None or lease.tokens <= 0:
                return False
            lease.tokens -= 1
            self.count = lease.base + lease.granted - lease.tokens
            return True

    def lease_size(self, identity: str) -> int:
        cap = _lease_cap(self.limit.limit)
        lease = _leases.get(self.key(identity))
        if cap == 1 or lease is None or time.monotonic() - lease.taken_at > _LEASE_FAST_SECONDS:
            return 1
        return min(lease.size * 2, cap)

    def leased(self, identity: str, size: int, total: int) -> None:
        """Redis answered `total` to INCRBY `size`: keep what was granted, count one."""
        base = total - size
        granted = max(0, min(size, self.limit.limit - base))
        key = self.key(identity)
        self.count = base + 1  # over the limit when nothing was granted: refused by check()
        with _leases_lock:
            if granted == 0:
                _leases.pop(key, None)
                return
            if len(_leases) >= _LEASES_MAX:
                _leases.clear()
            _leases[key] = _Lease(base, granted, granted - 1, size, time.monotonic())

    def check(self) -> RateState:
        assert self.count is not None
        return _check(self.limit, self.count, self.reset_at)


def read_and_count(cache_key: str | None, counter: StandardCounter | None, identity: str):
    """Read a cached value (unless `cache_key` is None) and, when given, count the standard
    bucket (from this process's lease when it holds a token): at most one round trip."""
    if counter is not None and counter.take_leased(identity):
        counter = None
    if counter is None:
        return None if cache_key is None else cache.get(cache_key)
    ttl = counter.limit.window_seconds + 1
    size = counter.lease_size(identity)
    client = redis_client()
    if client is not None:
        full = cache.make_key(f"rl:{counter.key(identity)}")
        pipe = client.pipeline(transaction=False)
        if cache_key is not None:
            pipe.get(cache.make_key(cache_key))
        pipe.incrby(full, size)
        pipe.expire(full, ttl, nx=True)
        results = pipe.execute()
        counter.leased(identity, size, int(results[-2]))
        raw = results[0] if cache_key is not None else None
        return None if raw is None else cache.client.decode(raw)
    counter.leased(identity, 1, _hit_many([(counter.key(identity), ttl)])[0])
    return None if cache_key is None else cache.get(cache_key)


def _check(limit: RateLimit, count: int, reset_at: int) -> RateState:
    state = RateState(limit.limit, limit.limit - count, reset_at)
    if count > limit.limit:
        retry_after = max(1, int(reset_at - time.time() + 0.999))
        raise APIError(
            "RATE_LIMITED",
            details={"limit": limit.name, "retry_after_seconds": retry_after},
            headers={"Retry-After": str(retry_after), **state.headers()},
        )
    return state


def tightest(states: list[RateState]) -> RateState:
    return min(states, key=lambda s: s.remaining)


def enforce(limits: list[RateLimit], identities: dict[str, str]) -> RateState:
    """Count this request against each limit; raise RATE_LIMITED when one is exceeded."""
    now = time.time()
    keys, windows = [], []
    for limit in limits:
        window = int(now // limit.window_seconds)
        windows.append((window + 1) * limit.window_seconds)
        ident = identities[limit.per]
        keys.append((f"{limit.name}:{ident}:{window}", limit.window_seconds + 1))
    counts = _hit_many(keys)
    return tightest(
        [
            _check(limit, count, reset_at)
            for limit, count, reset_at in zip(limits, counts, windows, strict=True)
        ]
    )
