"""The hardened provider client against a real loopback server: retries and the breaker."""

from __future__ import annotations

import socket
import time
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import pytest
import time_machine

from platform_core import errors
from platform_core.net import provider_client
from platform_core.net.provider_client import CircuitBreaker, ProviderUnavailable

pytestmark = pytest.mark.django_db


def _call(fake, path="/echo", provider="acme", **kwargs):
    return provider_client.request(provider, "POST", f"{fake.url}{path}", content=b"x=1",
                                   headers={"Content-Type": "text/plain"}, **kwargs)


def test_success_passes_through_and_identifies_itself(fake):
    response = _call(fake)
    assert response.ok
    assert response.attempts == 1
    assert response.json() == {"ok": True, "body": "x=1"}
    assert fake.requests[0].headers["User-Agent"] == provider_client.USER_AGENT


def test_429_is_retried_after_retry_after(fake):
    fake.faults.extend(["429:1"])
    started = time.monotonic()
    response = _call(fake)
    assert response.ok
    assert response.attempts == 2
    assert time.monotonic() - started >= 1.0  # waited what Retry-After asked
    assert len(fake.requests) == 2


def test_503_with_retry_after_then_success(fake):
    fake.faults.extend(["503:0", "503:0"])
    response = _call(fake)
    assert response.ok
    assert response.attempts == 3


def test_retry_after_as_http_date():
    when = datetime.now(UTC) + timedelta(seconds=30)
    seconds = provider_client.retry_after_seconds(format_datetime(when, usegmt=True))
    assert 28 <= seconds <= 30
    assert provider_client.retry_after_seconds("garbage") is None
    assert provider_client.retry_after_seconds("7") == 7


def test_attempts_are_bounded_and_end_in_provider_unavailable(fake):
    fake.faults.extend(["500"] * 10)
    with pytest.raises(ProviderUnavailable) as caught:
        _call(fake)
    assert len(fake.requests) == 3  # PROVIDER_HTTP_MAX_ATTEMPTS
    error = caught.value
    assert (error.code, error.status, error.reason) == ("PROVIDER_UNAVAILABLE", 503,
                                                        "server_error")
    assert error.response.status_code == 500


def test_a_wait_beyond_the_total_budget_is_not_taken(fake, settings):
    settings.PROVIDER_HTTP_MAX_TOTAL_SECONDS = 5
    fake.faults.extend(["429:120"])
    started = time.monotonic()
    with pytest.raises(ProviderUnavailable) as caught:
        _call(fake)
    assert time.monotonic() - started < 2
    assert len(fake.requests) == 1
    assert caught.value.reason == "rate_limited"
    assert caught.value.headers["Retry-After"] == "120"  # passed on to the caller


def test_client_errors_are_final_and_not_retried(fake):
    response = _call(fake, path="/bad")
    assert response.status_code == 400
    assert response.attempts == 1
    assert len(fake.requests) == 1


def test_connection_refused_is_retried_then_unavailable(fast_retries):
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()  # nothing listens there
    with pytest.raises(ProviderUnavailable) as caught:
        provider_client.request("acme", "POST", f"http://127.0.0.1:{port}/x")
    assert caught.value.reason == "connect_error"
    assert CircuitBreaker("acme", f"127.0.0.1:{port}").state() == "open"  # 3 failures


def test_reset_after_the_request_is_not_retried(fake):
    # The provider may have acted on it: a second attempt could send twice.
    fake.faults.extend(["reset"])
    with pytest.raises(ProviderUnavailable) as caught:
        _call(fake)
    assert caught.value.reason == "connection_reset"
    assert len(fake.requests) == 1


def test_private_targets_are_refused_outside_development(fake, settings):
    settings.ALLOW_PRIVATE_WEBHOOK_TARGETS = False
    with pytest.raises(ProviderUnavailable) as caught:
        _call(fake)
    assert caught.value.reason == "unsafe_target"
    assert fake.requests == []


def test_breaker_opens_after_consecutive_failures_and_fails_fast(fake):
    fake.faults.extend(["500"] * 3)
    for _ in range(3):  # threshold 3, one attempt each
        with pytest.raises(ProviderUnavailable):
            _call(fake, max_attempts=1)
    assert len(fake.requests) == 3
    with pytest.raises(ProviderUnavailable) as caught:
        _call(fake)
    assert caught.value.reason == "circuit_open"
    assert int(caught.value.headers["Retry-After"]) > 0
    assert len(fake.requests) == 3  # failed fast: the provider was not called

    # Another provider on the same host has its own breaker.
    assert _call(fake, provider="other").ok


def test_breaker_half_opens_after_cooldown_and_closes_on_success(fake):
    fake.faults.extend(["500"] * 3)
    for _ in range(3):
        with pytest.raises(ProviderUnavailable):
            _call(fake, max_attempts=1)
    host = fake.url.split("//", 1)[1]
    breaker = CircuitBreaker("acme", host)
    assert breaker.state() == "open"
    with time_machine.travel(datetime.now(UTC) + timedelta(seconds=31), tick=True):
        assert breaker.state() == "half_open"
        response = _call(fake)  # the probe goes through and succeeds
        assert response.ok
        assert breaker.state() == "closed"
        assert _call(fake).ok


def test_failed_probe_reopens_for_another_cooldown(fake):
    fake.faults.extend(["500"] * 4)
    for _ in range(3):
        with pytest.raises(ProviderUnavailable):
            _call(fake, max_attempts=1)
    later = datetime.now(UTC) + timedelta(seconds=31)
    with time_machine.travel(later, tick=True):
        with pytest.raises(ProviderUnavailable) as caught:
            _call(fake, max_attempts=1)
        assert caught.value.reason == "server_error"  # the probe reached the provider
        assert len(fake.requests) == 4
        with pytest.raises(ProviderUnavailable) as caught:
            _call(fake)
        assert caught.value.reason == "circuit_open"
        assert len(fake.requests) == 4


def test_half_open_lets_one_probe_at_a_time(fast_retries):
    breaker = CircuitBreaker("acme", "api.example.com")
    for _ in range(3):
        breaker.record_failure()
    with time_machine.travel(datetime.now(UTC) + timedelta(seconds=31), tick=True):
        # Another process sees the same state through the shared cache.
        other_process = CircuitBreaker("acme", "api.example.com")
        assert breaker.before_call() is True  # this caller is the probe
        with pytest.raises(ProviderUnavailable):
            other_process.before_call()
        breaker.record_success()
        assert other_process.before_call() is False  # closed again


def test_a_success_resets_the_run_of_failures(fast_retries):
    breaker = CircuitBreaker("acme", "api.example.com")
    breaker.record_failure()
    breaker.record_failure()
    breaker.record_success()
    breaker.record_failure()
    breaker.record_failure()
    assert breaker.state() == "closed"
    breaker.record_failure()
    assert breaker.state() == "open"


def test_provider_unavailable_is_a_registered_503():
    entry = errors.get("PROVIDER_UNAVAILABLE")
    assert entry.status == 503


def test_failures_in_flight_do_not_extend_an_open_breaker(fast_retries):
    breaker = CircuitBreaker("acme", "api.example.com")
    start = datetime.now(UTC)
    with time_machine.travel(start, tick=False):
        for _ in range(3):
            breaker.record_failure()
    with time_machine.travel(start + timedelta(seconds=20), tick=False):
        breaker.record_failure()  # a call that was already under way when it opened
    with time_machine.travel(start + timedelta(seconds=31), tick=False):
        assert breaker.state() == "half_open"


def test_a_cache_outage_leaves_the_breaker_closed(fake, monkeypatch):
    from django.core.cache import cache

    def down(*args, **kwargs):
        raise ConnectionError("redis is down")

    for name in ("get", "add", "get_many", "incr", "set", "delete", "delete_many"):
        monkeypatch.setattr(cache, name, down)
    assert _call(fake).ok
    fake.faults.extend(["500"] * 3)
    with pytest.raises(ProviderUnavailable) as caught:
        _call(fake)
    assert caught.value.reason == "server_error"
