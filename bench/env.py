"""The benchmark's environment: one dict shared by the harness and the gunicorn server.

The harness applies it to its own process before Django starts (seeding and cursor
signing then use exactly the settings the server uses) and hands it to gunicorn.
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
# High enough that the limiter counts every request but never refuses one.
UNLIMITED_RATE = str(10**9)


def _int(name: str, default: int) -> int:
    raw = os.environ.get(name, "")
    try:
        return int(raw) if raw else default
    except ValueError:
        raise SystemExit(f"bench: {name} must be an integer, got {raw!r}") from None


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
    env.update(
        DJANGO_SETTINGS_MODULE="config.settings.base",
        DEBUG="false",
        RATE_LIMIT_READ_PER_MINUTE=UNLIMITED_RATE,
        RATE_LIMIT_WRITE_PER_MINUTE=UNLIMITED_RATE,
        BENCH_FLOOR="1",
        LOG_LEVEL=env.get("LOG_LEVEL", "WARNING"),
        PYTHONUNBUFFERED="1",
    )
    return env


def apply_to_this_process(env: dict[str, str]) -> None:
    os.environ.update(env)
