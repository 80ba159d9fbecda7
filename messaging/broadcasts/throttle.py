"""Per-sender send rate: a token bucket in Redis shared by every worker.

Each sender address (per organization) has a bucket refilled at `rate` tokens per second
and holding at most `rate * MESSAGING_SENDER_BURST_SECONDS` tokens (at least 1). A
broadcast runner takes one token per message before it creates the message; when the
bucket is short it is told how long until the next token. The bucket lives in Redis
(one Lua script: refill, take, answer; Redis's own clock, so workers on several hosts
agree); without Redis (the embedded SQLite/locmem setup) it lives in the process.
"""

from __future__ import annotations

import math
import threading
import time

from django.conf import settings
from django.core.cache import cache

from platform_core.shared_cache import redis_client

DEFAULT_RATE = 10.0

_SCRIPT = """
local rate = tonumber(ARGV[1])
local capacity = tonumber(ARGV[2])
local want = tonumber(ARGV[3])
local clock = redis.call('TIME')
local now = tonumber(clock[1]) + tonumber(clock[2]) / 1000000
local state = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(state[1])
local at = tonumber(state[2])
if tokens == nil or at == nil then
  tokens = capacity
  at = now
end
tokens = math.min(capacity, tokens + math.max(0, now - at) * rate)
local granted = math.min(want, math.floor(tokens))
if granted < 0 then granted = 0 end
tokens = tokens - granted
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', tostring(now))
redis.call('EXPIRE', KEYS[1], math.ceil(capacity / rate) + 60)
local wait = 0
if granted < want then
  wait = (1 - tokens) / rate
end
return {granted, tostring(wait)}
"""

_local_lock = threading.Lock()
_local: dict[str, tuple[float, float]] = {}


def default_rate() -> float:
    return float(getattr(settings, "MESSAGING_SENDER_RATE_PER_SECOND", DEFAULT_RATE))


def burst_seconds() -> float:
    return float(getattr(settings, "MESSAGING_SENDER_BURST_SECONDS", 1.0))


def capacity_for(rate: float) -> float:
    return max(1.0, rate * burst_seconds())


def _key(organization_id: str, sender: str) -> str:
    return cache.make_key(f"sendrate:{organization_id}:{sender or '-'}")


def take(*, organization_id: str, sender: str, want: int, rate: float) -> tuple[int, float]:
    """Take up to `want` tokens from the sender's bucket: (granted, seconds until the next
    token when fewer than `want` were granted, else 0)."""
    if want <= 0:
        return 0, 0.0
    rate = max(float(rate), 0.001)
    capacity = capacity_for(rate)
    key = _key(organization_id, sender)
    client = redis_client()
    if client is not None:
        granted, wait = client.eval(_SCRIPT, 1, key, repr(rate), repr(capacity), int(want))
        return int(granted), float(wait)
    with _local_lock:
        now = time.monotonic()
        tokens, at = _local.get(key, (capacity, now))
        tokens = min(capacity, tokens + max(0.0, now - at) * rate)
        granted = max(0, min(want, math.floor(tokens)))
        tokens -= granted
        _local[key] = (tokens, now)
    wait = (1 - tokens) / rate if granted < want else 0.0
    return granted, wait
