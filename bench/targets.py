"""The targets `make bench` checks (issues 2, 5, 6 and 13, "Done means"), as a list of objects.

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


def _deliveries(r: dict[str, Measurement]) -> Outcome:
    m = r["message_delivery"]
    rate = m.requests_per_second or 0.0
    twice = int(m.figures.get("sent_twice", 0))
    return Outcome(
        rate >= 500 and twice == 0,
        f"{rate:,.0f} messages/s to delivered, {m.requests:,} delivered, {twice} sent twice"
        f" (needs >= 500/s, all delivered, none twice)",
    )


def _delivery_memory_flat(r: dict[str, Measurement]) -> Outcome:
    m = r["message_delivery"]
    if "rss_small_mib" not in m.figures or "rss_large_mib" not in m.figures:
        return Outcome(False, "no memory figures were measured")
    small, large = m.figures["rss_small_mib"], m.figures["rss_large_mib"]
    return Outcome(
        large <= small * 1.1,
        f"sends worker peak RSS {large:.1f} MiB with a {m.requests:,} backlog vs"
        f" {small:.1f} MiB with {m.figures.get('backlog_small', 0):,.0f}"
        f" ({large / small - 1:+.1%}; needs within +10%)",
    )


def _broadcast_time(r: dict[str, Measurement]) -> Outcome:
    seconds = r["broadcast"].figures.get("delivered_seconds", float("inf"))
    return Outcome(
        seconds < 30,
        f"{r['broadcast'].requests:,} delivered {seconds:.1f} s after the create call"
        f" (needs < 30 s)",
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


def _webhooks_past_a_slow_endpoint(r: dict[str, Measurement]) -> Outcome:
    m = r["webhook_slow_mix"]
    rate = m.figures.get("fast_per_second", 0.0)
    clean = m.figures.get("duplicates", 1) == 0 and m.figures.get("missing", 1) == 0
    return Outcome(
        rate >= 500 and clean,
        f"{rate:,.0f} deliveries/s to the fast endpoints (needs >= 500), duplicates"
        f" {m.figures.get('duplicates', 0):.0f}, missing {m.figures.get('missing', 0):.0f}",
    )


def _webhook_latency(r: dict[str, Measurement]) -> Outcome:
    p99 = r["webhook_latency"].p99_ms
    return Outcome(p99 < 100, f"p99 {p99:.1f} ms emit -> receipt (needs < 100 ms)")


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
        name="sandbox deliveries >= 500 msg/s",
        description="accepted -> delivered through the sandbox, at least 500 messages/s"
                    " sustained, every message delivered, none sent twice",
        needs=("message_delivery",),
        rule=_deliveries,
    ),
    Target(
        name="sends worker memory flat (within 10%)",
        description="the sends worker's peak RSS with the large backlog is within 10% of"
                    " that with the small one",
        needs=("message_delivery",),
        rule=_delivery_memory_flat,
    ),
    Target(
        name="broadcast delivered < 30 s",
        description="a test-mode broadcast to 10,000 contacts is delivered in under 30 s"
                    " end to end",
        needs=("broadcast",),
        rule=_broadcast_time,
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
    Target(
        name="webhooks >= 500/s past a slow endpoint",
        description="20,000 events over 4 endpoints, one answering in 1 s: at least 500"
                    " deliveries/s to the fast ones, none lost or duplicated (issue 13)",
        needs=("webhook_slow_mix",),
        rule=_webhooks_past_a_slow_endpoint,
    ),
    Target(
        name="webhook latency p99 < 100 ms",
        description="emit -> webhook receipt p99 under 100 ms at low load (issue 13)",
        needs=("webhook_latency",),
        rule=_webhook_latency,
    ),
]
