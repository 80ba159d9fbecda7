"""The scenario model shared by every scenario module: context, measurement, base class.

bench/scenarios.py (the HTTP scenarios and the SCENARIOS list) and bench/event_scenarios.py
build on it; it imports neither, so either can be imported first.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .env import BenchOptions
from .seed import Seed


@dataclass
class BenchContext:
    base_url: str
    options: BenchOptions
    seed: Seed
    values: dict[str, Any] = field(default_factory=dict)  # filled by prepare()

    @property
    def auth_headers(self) -> dict[str, str]:
        return {"X-API-Key": self.seed.raw_key}


@dataclass
class Measurement:
    scenario: str
    title: str
    requests_per_second: float | None = None
    p50_ms: float | None = None
    p99_ms: float | None = None
    requests: int = 0
    errors: int = 0  # non-2xx answers, socket errors and timeouts (events: not received)
    error: str | None = None  # why the scenario could not be measured
    notes: str = ""  # further figures of a scenario, printed under the table
    # Named figures a target reads (e.g. peak RSS growth in MiB); rounds take the median.
    figures: dict[str, float] = field(default_factory=dict)

    def summary(self) -> str:
        parts = []
        if self.requests_per_second is not None:
            parts.append(f"{self.requests_per_second:,.0f} req/s")
        if self.p50_ms is not None:
            parts.append(f"p50 {self.p50_ms:.2f} ms")
        if self.p99_ms is not None:
            parts.append(f"p99 {self.p99_ms:.2f} ms")
        parts += [f"{self.requests:,} requests", f"{self.errors} errors"]
        return ", ".join(parts) + (f"; {self.notes}" if self.notes else "")

    @property
    def valid(self) -> bool:
        return self.error is None and self.requests > 0 and self.errors == 0


class Scenario:
    name: str  # short id: the table's row, the targets' reference
    title: str
    needs_server = True  # the harness starts gunicorn (and needs wrk) only for these

    def prepare(self, ctx: BenchContext) -> None:
        """Compute ids, cursors or data the scenario needs (runs once, before check)."""

    def check(self, ctx: BenchContext) -> None:
        """Raise AssertionError with a message when a single request is not as expected."""

    def measure(self, ctx: BenchContext, *, seconds: int) -> Measurement:
        raise NotImplementedError

    def warm_up(self, ctx: BenchContext, *, seconds: int) -> None:
        if seconds:
            self.measure(ctx, seconds=seconds)
