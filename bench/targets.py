"""The targets `make bench` checks (issues 2, 5 and 6, "Done means"), as a list of objects.

A target compares measurements by scenario name. A missing or invalid measurement (not
run, errors under load) fails its target: nothing is passed on numbers we do not trust.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .scenarios import Measurement


@dataclass(frozen=True)
class Outcome:
    passed: bool
    observed: str


@dataclass(frozen=True)
class Target:
    name: str
    description: str
    needs: tuple[str, ...]
    rule: Callable[[dict[str, Measurement]], Outcome]

    def evaluate(self, results: dict[str, Measurement]) -> Outcome:
        for name in self.needs:
            m = results.get(name)
            if m is None:
                return Outcome(False, f"`{name}` was not measured")
            if not m.valid:
                why = m.error or f"{m.errors} failed requests"
                return Outcome(False, f"`{name}` has no valid measurement ({why})")
        return self.rule(results)


def _detail_vs_floor(r: dict[str, Measurement]) -> Outcome:
    ratio = r["detail"].requests_per_second / r["floor"].requests_per_second
    return Outcome(
        ratio >= 0.5,
        f"{r['detail'].requests_per_second:,.0f} / {r['floor'].requests_per_second:,.0f} req/s"
        f" = {ratio:.0%} of the floor (needs >= 50%)",
    )


def _deep_latency(r: dict[str, Measurement]) -> Outcome:
    ratio = r["list_deep"].p50_ms / r["list_page1"].p50_ms
    return Outcome(
        ratio <= 1.2,
        f"p50 {r['list_deep'].p50_ms:.2f} ms vs {r['list_page1'].p50_ms:.2f} ms"
        f" = {ratio:.2f}x page 1 (needs <= 1.20x)",
    )


def _deep_throughput(r: dict[str, Measurement]) -> Outcome:
    ratio = r["list_page1"].requests_per_second / r["list_deep"].requests_per_second
    return Outcome(
        ratio <= 1.2,
        f"{r['list_deep'].requests_per_second:,.0f} vs {r['list_page1'].requests_per_second:,.0f}"
        f" req/s: a deep request costs {ratio:.2f}x page 1 (needs <= 1.20x)",
    )


def _sends_vs_floor(r: dict[str, Measurement]) -> Outcome:
    ratio = r["message_send"].requests_per_second / r["floor"].requests_per_second
    return Outcome(
        ratio >= 0.4,
        f"{r['message_send'].requests_per_second:,.0f} / {r['floor'].requests_per_second:,.0f}"
        f" req/s = {ratio:.0%} of the floor (needs >= 40%)",
    )


# RSS moves by a MiB or two with no cause in the request (allocator arenas, the cursor's
# 2,000-row chunk, the 64 KiB CSV buffer): growth below this counts as this much, so that
# "1.5 x" compares a real figure, not noise.
EXPORT_GROWTH_FLOOR_MIB = 2.0


def _export_memory_flat(r: dict[str, Measurement]) -> Outcome:
    small, large = r["segment_export_10k"], r["segment_export_50k"]
    if "peak_growth_mib" not in small.figures or "peak_growth_mib" not in large.figures:
        return Outcome(False, "no memory figures were measured")
    g_small, g_large = small.figures["peak_growth_mib"], large.figures["peak_growth_mib"]
    allowed = 1.5 * max(g_small, EXPORT_GROWTH_FLOOR_MIB)
    return Outcome(
        g_large <= allowed,
        f"worker peak RSS +{g_large:.1f} MiB at {large.requests:,} rows"
        f" ({large.figures['peak_rss_mib']:.1f} MiB) vs +{g_small:.1f} MiB at"
        f" {small.requests:,} rows ({small.figures['peak_rss_mib']:.1f} MiB); needs <="
        f" 1.5 x max(+{g_small:.1f}, {EXPORT_GROWTH_FLOOR_MIB:g}) = +{allowed:.1f} MiB",
    )


def _verify_bulk_seconds(r: dict[str, Measurement]) -> Outcome:
    seconds = r["verify_bulk_1000"].figures.get("bulk_seconds")
    if seconds is None:
        return Outcome(False, "no bulk time was measured")
    return Outcome(seconds < 5.0, f"1,000 recipients answered in {seconds:.2f}s (needs < 5 s)")


TARGETS: list[Target] = [
    Target(
        name="detail >= 50% of floor",
        description="authenticated detail throughput is at least half the floor's",
        needs=("floor", "detail"),
        rule=_detail_vs_floor,
    ),
    Target(
        name="deep page p50 <= 1.2x page 1",
        description="the deep page's median latency is at most 1.2 times page 1's",
        needs=("list_page1", "list_deep"),
        rule=_deep_latency,
    ),
    Target(
        name="deep page throughput >= page 1 / 1.2",
        description="the deep page costs at most 1.2 times page 1 in throughput too",
        needs=("list_page1", "list_deep"),
        rule=_deep_throughput,
    ),
    Target(
        name="accepted sends >= 40% of floor",
        description="POST /api/v1/messages accepts at least 40% of the floor's requests/s",
        needs=("floor", "message_send"),
        rule=_sends_vs_floor,
    ),
    Target(
        name="export memory flat (50,000 rows <= 1.5x 10,000 rows)",
        description="the segment export's worker peak RSS growth at 50,000 rows is at most"
                    " 1.5 times that at 10,000 rows",
        needs=("segment_export_10k", "segment_export_50k"),
        rule=_export_memory_flat,
    ),
    Target(
        name="verify bulk of 1,000 < 5 s",
        description="POST /api/v1/verify/bulk with 1,000 recipients answers in under 5 s",
        needs=("verify_bulk_1000",),
        rule=_verify_bulk_seconds,
    ),
]
