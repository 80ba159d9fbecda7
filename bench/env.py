"""The benchmark's environment: one dict shared by the harness and its servers.

The harness applies it to its own process before Django starts (seeding and cursor
signing then use exactly the settings the server uses) and hands it to gunicorn, and to
the Celery worker and daphne of the event scenarios (bench/event_scenarios.py).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS_DIR = Path(__file__).resolve().parent / "results"
WORK_DIR = ROOT / "var" / "bench"  # logs, wrk scripts, the seeded key (never committed)

DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/engage_bench"
DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/0"
# The Celery broker of the event scenarios: a Redis database of its own, whose Celery keys
# are deleted before and after each of them (bench/procs.py, `clean_broker`).
DEFAULT_BROKER_URL = "redis://127.0.0.1:6379/9"
# High enough that the limiter counts every request but never refuses one.
UNLIMITED_RATE = str(10**9)


def _int(name: str, default: int) -> int:
    raw = os.environ.get(name, "")
    try:
        return int(raw) if raw else default
    except ValueError:
        raise SystemExit(f"bench: {name} must be an integer, got {raw!r}") from None


def _float(name: str, default: float) -> float:
    raw = os.environ.get(name, "")
    try:
        return float(raw) if raw else default
    except ValueError:
        raise SystemExit(f"bench: {name} must be a number, got {raw!r}") from None


def scaled(name: str, default: int, *, minimum: int = 1) -> int:
    """A count of the event scenarios: `name` when set, else `default` x BENCH_SCALE."""
    if os.environ.get(name, ""):
        return max(minimum, _int(name, default))
    return max(minimum, round(default * max(0.0, _float("BENCH_SCALE", 1.0))))


def cpu_count() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


@dataclass(frozen=True)
class BenchOptions:
    seconds: int
    warmup_seconds: int
    threads: int
    connections: int
    workers: int
    rounds: int

    @classmethod
    def from_environ(cls) -> BenchOptions:
        return cls(
            seconds=max(1, _int("BENCH_SECONDS", 10)),
            warmup_seconds=max(0, _int("BENCH_WARMUP_SECONDS", 1)),
            threads=max(1, _int("BENCH_THREADS", 1)),
            connections=max(1, _int("BENCH_CONNECTIONS", 16)),
            workers=max(1, _int("BENCH_WORKERS", cpu_count())),
            rounds=max(1, _int("BENCH_ROUNDS", 1)),
        )


def server_environ() -> dict[str, str]:
    """The variables of the measured server (and of the harness's own Django)."""
    env = dict(os.environ)
    env.setdefault("DATABASE_URL", DEFAULT_DATABASE_URL)
    env.setdefault("REDIS_URL", DEFAULT_REDIS_URL)
    env.setdefault("CACHE_KEY_PREFIX", "bench")
    # Never a broker of the caller's environment: the harness deletes its Celery keys.
    env["CELERY_BROKER_URL"] = env.get("BENCH_BROKER_URL") or DEFAULT_BROKER_URL
    env.update(
        DJANGO_SETTINGS_MODULE="config.settings.base",
        DEBUG="false",
        RATE_LIMIT_READ_PER_MINUTE=UNLIMITED_RATE,
        RATE_LIMIT_WRITE_PER_MINUTE=UNLIMITED_RATE,
        BENCH_FLOOR="1",
        # The event scenarios deliver webhooks to a receiver on loopback.
        ALLOW_PRIVATE_WEBHOOK_TARGETS="true",
        LOG_LEVEL=env.get("LOG_LEVEL", "WARNING"),
        PYTHONUNBUFFERED="1",
    )
    return env


def apply_to_this_process(env: dict[str, str]) -> None:
    os.environ.update(env)
