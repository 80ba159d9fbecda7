"""The results table: plain text on the terminal, Markdown in bench/results/latest.md."""

from __future__ import annotations

import platform
import subprocess
from datetime import UTC, datetime

from .env import ROOT, BenchOptions
from .scenarios import Measurement
from .targets import Outcome, Target

EVENT_SCENARIO_NAMES = {"webhook_throughput", "webhook_latency", "sse_latency"}
EVENT_METHOD = (
    "Event scenarios (bench/event_scenarios.py): one `celery -A config worker --pool=solo`"
    " on a Redis broker, events emitted through `platform_core.events.bus.emit` and taking"
    " the real path (after-commit fan-out task, webhooks handler, delivery task); webhooks"
    " go to a threaded receiver on loopback in its own process, and the SSE streams are"
    " read by a separate asyncio process from one daphne process. For them req/s is"
    " deliveries/s, requests is events received, errors is events not received, and"
    " latency is emit -> receipt."
)
EXPORT_SCENARIO_NAMES = {"contact_export", "segment_export_10k", "segment_export_50k"}
EXPORT_METHOD = (
    "Exports (bench/contact_scenarios.py): each against a fresh gunicorn with one sync worker"
    " (`-w 1`, same command and environment as the measured server), warmed up with a"
    " 200-row export; the CSV is read in full by the harness while a thread samples the"
    " worker's VmRSS every 20 ms. req/s is rows/s (rows / whole request), requests is rows;"
    " peak growth = highest sample - the worker's settled RSS before the request."
    " Seeded data: up to 100,000 contacts in the bench organization, 4 custom fields each."
)
COUNT_METHOD = (
    "Segment count: tags eq vip AND custom_fields.plan eq pro AND email contains"
    " @example.com over the seeded contacts; in-process it is"
    " `contacts_matching(tree, organization=org).count()` (one SQL COUNT) timed per call;"
    " over HTTP it is POST /contacts/segments/autopilot with a description the rule-based"
    " engine parses into the same three rules (parse + count, `matched_count`), wrk -c1."
)
MESSAGING_METHOD = (
    "Messaging (bench/messaging_scenarios.py), sandbox organization `bench-sandbox`:"
    " accepted sends are wrk POSTs of an SMS to a random valid +1 415 number, with no Celery"
    " worker (tasks queue on the benchmark's own Redis broker database, deleted after);"
    " messages/s to `delivered` is N sends accepted in one transaction through"
    " `messaging.services.message_send`, then one solo `celery -A config worker -Q <family>`"
    " per queue family (sends, events, webhooks, default): the sends worker drains them in"
    " batches (send, sandbox receipt with delay 0 s), the events worker fans the events"
    " out; req/s = delivered / (last delivered_at - commit); a 2,000 run first, the sends"
    " worker's peak RSS sampled in both."
)
BROADCAST_METHOD = (
    "Broadcast (bench/broadcast_scenarios.py), sandbox organization `bench-sandbox`: one sms"
    " broadcast (`broadcast_create`, as POST /api/v1/broadcasts) to a seeded list of N"
    " contacts with rate_per_second 10,000, run by one solo worker per queue family (runners"
    " on default, batched sends and sandbox receipts with delay 0 s on sends, event"
    " fan-outs on events); queued/s = queued / (last recipient processed_at - create call),"
    " delivered/s = delivered / (last delivered_at - create call); req/s is delivered/s."
)
NON_WRK_SCENARIO_NAMES = EVENT_SCENARIO_NAMES | EXPORT_SCENARIO_NAMES | {
    "segment_count", "message_delivery", "broadcast"}
HEADERS = ("scenario", "req/s", "p50 ms", "p99 ms", "requests", "errors")


def _num(value: float | None, fmt: str) -> str:
    return "n/a" if value is None else format(value, fmt)


def rows(results: list[Measurement]) -> list[tuple[str, ...]]:
    out = []
    for m in results:
        if m.error:
            out.append((m.title, "n/a", "n/a", "n/a", "0", f"not measured: {m.error}"))
            continue
        out.append((
            m.title,
            _num(m.requests_per_second, ",.0f"),
            _num(m.p50_ms, ".2f"),
            _num(m.p99_ms, ".2f"),
            f"{m.requests:,}",
            str(m.errors),
        ))
    return out


def text_table(results: list[Measurement]) -> str:
    table = [HEADERS, *rows(results)]
    widths = [max(len(r[i]) for r in table) for i in range(len(HEADERS))]
    lines = []
    for n, row in enumerate(table):
        cells = [row[0].ljust(widths[0])] + [c.rjust(w) for c, w in zip(row[1:], widths[1:],
                                                                        strict=True)]
        lines.append("  ".join(cells))
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def notes(results: list[Measurement]) -> list[str]:
    return [f"{m.scenario}: {m.notes}" for m in results if m.notes and not m.error]


def text_targets(outcomes: list[tuple[Target, Outcome]]) -> str:
    return "\n".join(
        f"{'PASS' if o.passed else 'FAIL'}  {t.name}: {o.observed}" for t, o in outcomes
    )


def _git_commit() -> str:
    try:
        out = subprocess.run(  # noqa: S603,S607 - fixed argv
            ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True,
            timeout=5, check=False,
        )
        return out.stdout.strip() or "unknown"
    except OSError:
        return "unknown"


def markdown(results: list[Measurement], outcomes: list[tuple[Target, Outcome]],
             options: BenchOptions, *, row_count: int) -> str:
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    http = any(m.scenario not in NON_WRK_SCENARIO_NAMES for m in results)
    setup = (
        f" with {options.workers} gunicorn sync worker(s) (one per core), PostgreSQL + Redis"
        f" on the same machine; wrk -t{options.threads} -c{options.connections}"
        f" -d{options.seconds}s after a {options.warmup_seconds}s warm-up"
        if http else ", PostgreSQL + Redis on the same machine"
    )
    lines = [
        "# Benchmark results (`make bench`)",
        "",
        f"{when}, commit {_git_commit()}, {platform.machine()}{setup}"
        + (f", median of {options.rounds} interleaved rounds" if options.rounds > 1 else "")
        + (f", {row_count:,} rows in the listed table." if http else "."),
        "",
        "| " + " | ".join(HEADERS) + " |",
        "|" + "|".join(["---"] + ["---:"] * (len(HEADERS) - 1)) + "|",
    ]
    lines += ["| " + " | ".join(r) + " |" for r in rows(results)]
    if notes(results):
        lines += [""] + [f"- {line}" for line in notes(results)]
    names = {m.scenario for m in results}
    for group, method in ((EVENT_SCENARIO_NAMES, EVENT_METHOD),
                          (EXPORT_SCENARIO_NAMES, EXPORT_METHOD),
                          ({"segment_count", "segment_count_http"}, COUNT_METHOD),
                          ({"message_send", "message_delivery"}, MESSAGING_METHOD),
                          ({"broadcast"}, BROADCAST_METHOD)):
        if names & group:
            lines += ["", method]
    if outcomes:
        lines += ["", "| target | result | observed |", "|---|---|---|"]
        lines += [f"| {t.name} | {'PASS' if o.passed else '**FAIL**'} | {o.observed} |"
                  for t, o in outcomes]
    return "\n".join(lines) + "\n"
