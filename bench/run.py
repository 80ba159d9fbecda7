"""`python -m bench.run` (`make bench`): load the platform production-style and report.

1. wrk (Debian's package, installed when missing), PostgreSQL and Redis at their standard
   local ports (DATABASE_URL, default postgres://postgres@127.0.0.1:5432/engage_bench;
   REDIS_URL, default redis://127.0.0.1:6379/0, with its own CACHE_KEY_PREFIX "bench").
2. The database is created when missing, migrated and seeded once (bench/seed.py).
3. gunicorn serves config.wsgi with one sync worker per core, DEBUG off, the rate limiter
   counting but never refusing, and the floor view mounted (BENCH_FLOOR=1).
4. Each scenario of bench/scenarios.py is checked with one request, warmed up, then loaded
   with wrk from this second process for BENCH_SECONDS (default 10).
   The event scenarios (bench/event_scenarios.py: webhook deliveries/s, deliveries/s to
   three fast endpoints past a slow one, latency, SSE latency with 500 streams) start their
   own Celery workers (one per queue family: events, webhooks), receivers and daphne instead,
   on a Redis broker database of the benchmark's own (BENCH_BROKER_URL, default
   redis://127.0.0.1:6379/9); gunicorn and wrk are skipped when only they are selected.
   The contacts scenarios (bench/contact_scenarios.py: exports of 10,000 and 50,000 rows
   with the serving worker's peak memory, each on a one-worker gunicorn of its own, and a
   three-rule segment count over 100,000 contacts, seeded once) and the messaging ones
   (bench/messaging_scenarios.py: accepted sends/s for POST /api/v1/messages in a sandbox
   organization, and messages/s to `delivered` through one solo Celery worker per queue
   family, `-Q sends|events|webhooks|default`) follow.
5. The table and the targets of bench/targets.py are printed and written as Markdown to
   bench/results/latest.md. The exit code is 0 even when a target fails (this is a
   measurement); it is non-zero only when the harness itself could not run.

Variables: BENCH_SECONDS, BENCH_WARMUP_SECONDS (1), BENCH_ROUNDS (1; on a busy machine 3
gives the median of three interleaved rounds), BENCH_CONNECTIONS (16), BENCH_THREADS (1),
BENCH_WORKERS (cores), BENCH_ONLY (comma-separated scenario names). Event scenarios:
BENCH_SCALE (1.0: multiplies their counts), BENCH_WEBHOOK_EVENTS (2000),
BENCH_WEBHOOK_MIX_EVENTS (20,000), BENCH_WEBHOOK_SLOW_SECONDS (1),
BENCH_WEBHOOK_LATENCY_EVENTS (200), BENCH_WEBHOOK_LATENCY_RATE (10/s), BENCH_SSE_STREAMS
(500), BENCH_SSE_EVENTS (50), BENCH_SSE_RATE (1/s), BENCH_BROKER_URL. Contacts and
messaging (also scaled by BENCH_SCALE): BENCH_CONTACTS (100,000 seeded),
BENCH_CONTACT_EXPORT_ROWS (10,000), BENCH_SEGMENT_EXPORT_SMALL_ROWS (10,000),
BENCH_SEGMENT_EXPORT_LARGE_ROWS (50,000), BENCH_SEGMENT_COUNT_RUNS (100), BENCH_MESSAGES
(20,000), BENCH_MESSAGES_SMALL (2,000, the memory baseline), BENCH_SANDBOX_RECEIPT_DELAY
(0 s). Broadcast (bench/broadcast_scenarios.py: messages/s queued and delivered by one sms
broadcast, one solo worker per queue family): BENCH_BROADCAST_RECIPIENTS
(10,000, scaled).
"""

from __future__ import annotations

import os
import signal
import statistics
import sys
import time

from . import seed, wrk
from .env import RESULTS_DIR, BenchOptions, apply_to_this_process, server_environ
from .report import markdown, notes, text_table, text_targets
from .scenarios import SCENARIOS, BenchContext, Measurement, Scenario
from .server import GunicornServer, ServerError
from .targets import TARGETS


class HarnessError(RuntimeError):
    pass


def _on_sigterm(signum, frame):  # stop the server on the way out, as for Ctrl-C
    raise KeyboardInterrupt


def _selected() -> list[Scenario]:
    only = {n.strip() for n in os.environ.get("BENCH_ONLY", "").split(",") if n.strip()}
    unknown = only - {s.name for s in SCENARIOS}
    if unknown:
        raise HarnessError(f"BENCH_ONLY names unknown scenarios: {', '.join(sorted(unknown))}")
    return [s for s in SCENARIOS if not only or s.name in only]


def _check_redis() -> None:
    from django.core.cache import cache

    try:
        cache.set("bench:probe", "1", 5)
        ok = cache.get("bench:probe") == "1"
    except Exception as exc:  # any client error means unusable
        raise HarnessError(f"Redis unreachable at {os.environ['REDIS_URL']}: {exc}") from None
    if not ok:
        raise HarnessError("Redis did not return what was written")


def prepare_data(env: dict[str, str]) -> seed.Seed:
    created = seed.ensure_database(env["DATABASE_URL"])
    print(f"database: {'created' if created else 'present'} ({env['DATABASE_URL']})", flush=True)
    import django

    django.setup()
    _check_redis()
    started = time.monotonic()
    seed.migrate()
    print(f"migrated in {time.monotonic() - started:.1f}s", flush=True)
    data = seed.ensure_seed()
    print(f"seed: organization {data.org_id}, {data.row_count:,} API-key rows", flush=True)
    from django.core.cache import cache

    cache.delete_pattern("*")  # this benchmark's own prefix only: a clean limiter and cache
    from django.db import connection

    connection.close()
    return data


def ready(scenario: Scenario, ctx: BenchContext) -> Measurement | None:
    """Prepare and check one request; a Measurement carrying the error when it fails."""
    try:
        scenario.prepare(ctx)
        scenario.check(ctx)
    except (AssertionError, RuntimeError) as exc:
        print(f"   {scenario.name}: not measured: {exc}", flush=True)
        return Measurement(scenario=scenario.name, title=scenario.title, error=str(exc))
    return None


def measure_once(scenario: Scenario, ctx: BenchContext, options: BenchOptions) -> Measurement:
    print(f"== {scenario.title}", flush=True)
    try:
        scenario.warm_up(ctx, seconds=options.warmup_seconds)
        m = scenario.measure(ctx, seconds=options.seconds)
    except RuntimeError as exc:
        print(f"   not measured: {exc}", flush=True)
        return Measurement(scenario=scenario.name, title=scenario.title, error=str(exc))
    print(f"   {m.summary()}", flush=True)
    return m


def _median(values) -> float | None:
    present = [v for v in values if v is not None]
    return statistics.median(present) if present else None


def combine(runs: list[Measurement]) -> Measurement:
    """Several rounds of one scenario: the median of each figure, requests and errors summed."""
    failed = [m for m in runs if m.error]
    if failed or len(runs) == 1:
        return failed[0] if failed else runs[0]
    return Measurement(
        scenario=runs[0].scenario,
        title=runs[0].title,
        requests_per_second=_median(m.requests_per_second for m in runs),
        p50_ms=_median(m.p50_ms for m in runs),
        p99_ms=_median(m.p99_ms for m in runs),
        requests=sum(m.requests for m in runs),
        errors=sum(m.errors for m in runs),
        figures={key: _median(m.figures.get(key) for m in runs)
                 for key in runs[0].figures},
        notes=" | ".join(f"round {n}: {m.notes}" for n, m in enumerate(runs, 1) if m.notes),
    )


def run_scenarios(scenarios: list[Scenario], ctx: BenchContext,
                  options: BenchOptions) -> list[Measurement]:
    """Check every scenario, then measure them in rounds (interleaved, so that a burst of
    outside load hits every scenario of a round alike); the median of the rounds counts."""
    unready = {s.name: m for s in scenarios if (m := ready(s, ctx)) is not None}
    runs: dict[str, list[Measurement]] = {s.name: [] for s in scenarios}
    for round_no in range(1, options.rounds + 1):
        if options.rounds > 1:
            print(f"\n-- round {round_no}/{options.rounds}", flush=True)
        for scenario in scenarios:
            if scenario.name not in unready:
                runs[scenario.name].append(measure_once(scenario, ctx, options))
    return [unready.get(s.name) or combine(runs[s.name]) for s in scenarios]


def main() -> int:
    signal.signal(signal.SIGTERM, _on_sigterm)
    # Ctrl-C must reach the `finally` that stops gunicorn, even when started with SIGINT
    # ignored (a background job of a non-interactive shell).
    signal.signal(signal.SIGINT, signal.default_int_handler)
    options = BenchOptions.from_environ()
    env = server_environ()
    apply_to_this_process(env)
    try:
        scenarios = _selected()
        needs_server = any(s.needs_server for s in scenarios)
        if needs_server:
            print(f"wrk: {wrk.ensure_wrk()}", flush=True)
        data = prepare_data(env)
        if needs_server:
            server = GunicornServer(env=env, workers=options.workers)
            print(f"\nstarting: {' '.join(server.command)}", flush=True)
            with server:
                print(f"gunicorn answers /health at {server.base_url}", flush=True)
                ctx = BenchContext(base_url=server.base_url, options=options, seed=data)
                results = run_scenarios(scenarios, ctx, options)
            print("gunicorn stopped", flush=True)
        else:
            ctx = BenchContext(base_url="", options=options, seed=data)
            results = run_scenarios(scenarios, ctx, options)
    except (HarnessError, ServerError, wrk.WrkMissing) as exc:
        print(f"\nbench: cannot run: {exc}", file=sys.stderr, flush=True)
        return 2
    except KeyboardInterrupt:
        print("\nbench: interrupted; every subprocess stopped", file=sys.stderr, flush=True)
        return 130

    by_name = {m.scenario: m for m in results}
    outcomes = [(t, t.evaluate(by_name)) for t in TARGETS
                if all(n in {s.name for s in scenarios} for n in t.needs)]
    print("\n" + text_table(results))
    if notes(results):
        print("\n" + "\n".join(notes(results)))
    if outcomes:
        print("\n" + text_targets(outcomes))
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    path = RESULTS_DIR / "latest.md"
    path.write_text(markdown(results, outcomes, options, row_count=data.row_count))
    print(f"\nwritten to {path}")
    failed = [t.name for t, o in outcomes if not o.passed]
    if failed:
        print(f"\nFAIL: {len(failed)} target(s) not met: {'; '.join(failed)}"
              " (a measurement: exit status stays 0)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
