"""The one hardened client for calls to outside providers (carriers, chat apps, SMTP relays).

Every call goes through `platform_core.net.http` (addresses checked and pinned, no
redirects, no environment proxies, bounded timeout and body) and adds two things:

- Retries. An answer of 429 or 5xx, or a connection that could not be opened at all, is
  tried again with exponential backoff and jitter, waiting at least what the provider's
  `Retry-After` asks (seconds or an HTTP date). Attempts are bounded
  (PROVIDER_HTTP_MAX_ATTEMPTS) and so is the total time spent including the waits
  (PROVIDER_HTTP_MAX_TOTAL_SECONDS): a wait that would go past it is not taken. Timeouts and
  connections reset after the request was written are not retried: the provider may have
  acted on the request, and a second send would be a second message.
- A circuit breaker per (provider, host), kept in the cache so every worker process shares
  it. PROVIDER_BREAKER_THRESHOLD consecutive failures (5xx answers and transport errors;
  4xx answers, 429 included, mean the provider is up) open it; while open, calls fail at
  once with `ProviderUnavailable` (503 PROVIDER_UNAVAILABLE, `Retry-After` = the rest of
  the cool-down). After PROVIDER_BREAKER_COOLDOWN_SECONDS it is half-open: one caller at a
  time is let through as a probe; its success closes the breaker, its failure opens it for
  another cool-down.

    response = provider_client.request("twilio", "POST", url, content=body,
                                       headers={...})
    response.status_code, response.body, response.json()

When the retries are used up on 429/5xx, or the transport fails, `ProviderUnavailable` is
raised too (its `response` is the last answer, if any), so callers only ever see final
answers below 500 other than 429, which are the provider's verdict on the request.
"""

from __future__ import annotations

import json
import logging
import random
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.core.cache import cache

from platform_core.errors import APIError, register

from . import http

logger = logging.getLogger("platform_core.net.provider_client")

register("PROVIDER_UNAVAILABLE", 503,
         "The provider is not answering; retry after the time in Retry-After.",
         app="platform_core")

USER_AGENT = "Engage-Providers/1.0"
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
# Transport failures that prove the request never reached the provider: safe to retry.
RETRY_KINDS = frozenset({"connect_error"})
# Transport failures that count against the breaker (an unsafe target is our refusal).
BREAKER_KINDS = frozenset({"timeout", "connect_error", "connection_reset", "tls_error",
                           "protocol_error"})


def _setting(name: str, default):
    return getattr(settings, name, default)


@dataclass(frozen=True)
class RetryPolicy:
    max_attempts: int = 3
    backoff_base: float = 0.5
    backoff_max: float = 8.0
    max_total_seconds: float = 30.0
    timeout: float = 10.0

    @classmethod
    def from_settings(cls, **overrides: Any) -> RetryPolicy:
        values = {
            "max_attempts": int(_setting("PROVIDER_HTTP_MAX_ATTEMPTS", cls.max_attempts)),
            "backoff_base": float(_setting("PROVIDER_HTTP_BACKOFF_BASE", cls.backoff_base)),
            "backoff_max": float(_setting("PROVIDER_HTTP_BACKOFF_MAX", cls.backoff_max)),
            "max_total_seconds": float(_setting("PROVIDER_HTTP_MAX_TOTAL_SECONDS",
                                                cls.max_total_seconds)),
            "timeout": float(_setting("PROVIDER_HTTP_TIMEOUT", cls.timeout)),
        }
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**values)

    def backoff(self, attempt: int) -> float:
        """The wait after failed attempt number `attempt` (1-based): full jitter."""
        ceiling = min(self.backoff_max, self.backoff_base * (2 ** (attempt - 1)))
        return random.uniform(ceiling / 2, ceiling)  # noqa: S311 - jitter, not a secret


class ProviderUnavailable(APIError):
    """The provider cannot be reached now (breaker open, retries used up, transport error)."""

    def __init__(self, provider: str, host: str, message: str, *, reason: str,
                 retry_after: float | None = None,
                 response: ProviderResponse | None = None) -> None:
        seconds = max(1, int(retry_after + 0.999)) if retry_after is not None else None
        details: dict[str, Any] = {"provider": provider, "reason": reason}
        if response is not None:
            details["provider_status"] = response.status_code
        super().__init__(
            "PROVIDER_UNAVAILABLE", message, details=details,
            headers={"Retry-After": str(seconds)} if seconds else None,
        )
        self.provider = provider
        self.host = host
        self.reason = reason
        self.retry_after = seconds
        self.response = response


# --- Circuit breaker ---------------------------------------------------------------------


class CircuitBreaker:
    """Consecutive-failure breaker for one (provider, host), state in the shared cache.

    Keys: `pcb:<provider>:<host>:fails` (the current run of failures), `...:open` (the time
    the breaker opened, present while open or half-open), `...:probe` (held by the one
    caller probing a half-open breaker).
    """

    def __init__(self, provider: str, host: str, *, threshold: int | None = None,
                 cooldown: float | None = None) -> None:
        self.provider = provider
        self.host = host
        self.threshold = max(1, int(threshold if threshold is not None
                                    else _setting("PROVIDER_BREAKER_THRESHOLD", 5)))
        self.cooldown = float(cooldown if cooldown is not None
                              else _setting("PROVIDER_BREAKER_COOLDOWN_SECONDS", 30))
        base = f"pcb:{provider}:{host}"
        self._fails, self._open, self._probe = f"{base}:fails", f"{base}:open", f"{base}:probe"

    @property
    def _state_ttl(self) -> int:
        # Long enough to outlive the cool-down; a forgotten half-open breaker closes itself.
        return int(max(self.cooldown * 20, 3600))

    def state(self) -> str:
        opened_at = _cached(cache.get, self._open)
        if opened_at is None:
            return "closed"
        return "open" if time.time() < opened_at + self.cooldown else "half_open"

    def before_call(self) -> bool:
        """Let the call through (True when it is the half-open probe) or raise."""
        opened_at = _cached(cache.get, self._open)
        if opened_at is None:
            return False
        remaining = opened_at + self.cooldown - time.time()
        if remaining <= 0 and _cached(cache.add, self._probe, 1,
                                      timeout=max(int(self.cooldown), 5), default=True):
            return True
        raise ProviderUnavailable(
            self.provider, self.host,
            f"The {self.provider} provider is failing; calls are paused for a while.",
            reason="circuit_open", retry_after=max(remaining, 1.0),
        )

    def record_success(self) -> None:
        if _cached(cache.get_many, [self._fails, self._open], default={}):
            _cached(cache.delete_many, [self._fails, self._open, self._probe])

    def record_failure(self, *, probe: bool = False) -> None:
        try:
            cache.add(self._fails, 0, timeout=self._state_ttl)
            try:
                failures = cache.incr(self._fails)
            except ValueError:  # expired between add and incr
                cache.set(self._fails, 1, timeout=self._state_ttl)
                failures = 1
            if probe:
                # The probe failed: open again for a whole cool-down.
                cache.set(self._open, time.time(), timeout=self._state_ttl)
                cache.delete(self._probe)
            elif failures < self.threshold or not cache.add(self._open, time.time(),
                                                            timeout=self._state_ttl):
                return  # below the threshold, or already open (in-flight failures don't
                # extend the cool-down)
        except Exception:  # noqa: BLE001 - the cache is down: the breaker stays closed
            logger.warning("provider breaker state unavailable provider=%s", self.provider)
            return
        logger.warning("provider breaker open provider=%s host=%s failures=%s",
                       self.provider, self.host, failures)

    def reset(self) -> None:
        cache.delete_many([self._fails, self._open, self._probe])


def _cached(operation: Callable[..., Any], *args: Any, default: Any = None, **kwargs: Any) -> Any:
    """A cache operation of the breaker; if the cache is down the breaker counts as closed."""
    try:
        return operation(*args, **kwargs)
    except Exception:  # noqa: BLE001 - availability of provider calls over breaker state
        logger.warning("provider breaker state unavailable (cache error)")
        return default


def breaker_for(provider: str, url: str) -> CircuitBreaker:
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    if parts.port:
        host = f"{host}:{parts.port}"
    return CircuitBreaker(provider, host)


def guarded(provider: str, host: str, call: Callable[[], Any], *,
            is_failure: Callable[[Exception], bool | None] = lambda exc: True) -> Any:
    """Run a non-HTTP provider call (an SMTP session) under the same breaker.

    An exception is re-raised; `is_failure(exc)` says whether it counts against the breaker
    (True), proves the provider up (False: a refusal), or says nothing about it (None).
    """
    breaker = CircuitBreaker(provider, host)
    probe = breaker.before_call()
    try:
        result = call()
    except Exception as exc:
        verdict = is_failure(exc)
        if verdict:
            breaker.record_failure(probe=probe)
        elif verdict is not None:
            breaker.record_success()
        elif probe:
            _cached(cache.delete, breaker._probe)
        raise
    breaker.record_success()
    return result


# --- Requests ----------------------------------------------------------------------------


@dataclass
class ProviderResponse:
    status_code: int
    headers: list[tuple[str, str]]
    body: bytes
    attempts: int
    elapsed_ms: int

    def header(self, name: str) -> str | None:
        name = name.lower()
        for key, value in self.headers:
            if key.lower() == name:
                return value
        return None

    @property
    def ok(self) -> bool:
        return 200 <= self.status_code < 300

    def json(self) -> Any:
        """The body parsed as JSON, or None when it is not JSON."""
        try:
            return json.loads(self.body or b"null")
        except ValueError:
            return None

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", "replace")


def retry_after_seconds(value: str | None) -> float | None:
    """Seconds from a Retry-After value (delta-seconds or an HTTP date); None if absent/bad."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(float(value), 0.0)
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max((when - datetime.now(UTC)).total_seconds(), 0.0)


def request(
    provider: str,
    method: str,
    url: str,
    *,
    content: bytes = b"",
    headers: Mapping[str, str] | None = None,
    timeout: float | None = None,
    max_attempts: int | None = None,
    max_total_seconds: float | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> ProviderResponse:
    """Call a provider; retry 429/5xx within bounds; trip and honor the breaker."""
    policy = RetryPolicy.from_settings(timeout=timeout, max_attempts=max_attempts,
                                       max_total_seconds=max_total_seconds)
    breaker = breaker_for(provider, url)
    sent_headers = {"User-Agent": USER_AGENT, **dict(headers or {})}
    started = time.monotonic()
    attempt = 0
    while True:
        attempt += 1
        probe = breaker.before_call()
        remaining_total = policy.max_total_seconds - (time.monotonic() - started)
        try:
            response = http.request(
                method, url, content=content, headers=sent_headers,
                timeout=max(min(policy.timeout, remaining_total), 0.5),
                max_body=256 * 1024,
            )
        except http.OutboundError as exc:
            if exc.kind == "unsafe_target":
                raise ProviderUnavailable(
                    provider, breaker.host,
                    f"The {provider} address is not an allowed target: {exc.message}.",
                    reason="unsafe_target") from exc
            if exc.kind in BREAKER_KINDS:
                breaker.record_failure(probe=probe)
            wait = policy.backoff(attempt)
            if exc.kind in RETRY_KINDS and _may_wait(policy, attempt, started, wait):
                sleep(wait)
                continue
            raise ProviderUnavailable(
                provider, breaker.host,
                f"The {provider} provider could not be reached ({exc.kind}).",
                reason=exc.kind) from exc

        status = response.status_code
        if status >= 500:
            breaker.record_failure(probe=probe)
        else:
            breaker.record_success()
        if status not in RETRY_STATUSES and status < 500:
            return ProviderResponse(status, response.headers, response.body, attempt,
                                    int((time.monotonic() - started) * 1000))
        asked = retry_after_seconds(response.header("Retry-After"))
        wait = max(policy.backoff(attempt), asked or 0.0)
        final = ProviderResponse(status, response.headers, response.body, attempt,
                                 int((time.monotonic() - started) * 1000))
        if _may_wait(policy, attempt, started, wait):
            logger.info("provider retry provider=%s status=%s attempt=%s wait=%.2f",
                        provider, status, attempt, wait)
            sleep(wait)
            continue
        reason = "rate_limited" if status == 429 else "server_error"
        raise ProviderUnavailable(
            provider, breaker.host,
            f"The {provider} provider answered {status} after {attempt} attempt(s).",
            reason=reason, retry_after=asked, response=final,
        )


def _may_wait(policy: RetryPolicy, attempt: int, started: float, wait: float) -> bool:
    if attempt >= policy.max_attempts:
        return False
    return (time.monotonic() - started) + wait < policy.max_total_seconds


def post(provider: str, url: str, **kwargs: Any) -> ProviderResponse:
    return request(provider, "POST", url, **kwargs)
