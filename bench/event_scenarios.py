"""The event scenarios of `make bench` (issues 3 and 13): webhooks and the SSE stream.

They measure the real path of an event, never a shortcut:

    bus.emit() in the harness (the outbox row; after commit the fan-out drain is kicked:
    `events.drain`, one task for a burst of events)
      -> the events worker claims undispatched events in batches and runs the fan-out per
         batch: the feed, the stream group (channel layer group_send), and the webhooks
         handler, which creates every delivery of the batch in one INSERT and, after its
         commit, kicks the delivery drain (`webhooks.drain`)
      -> the webhooks worker claims due deliveries per endpoint (capped), POSTs them
         concurrently over pooled connections and records them in bulk.
    SSE: daphne's EventStreamConsumer receives the group message and writes it to each stream.

Each scenario starts what it needs as subprocesses, on loopback only, and stops them on the
way out (normal, error or Ctrl-C): one `celery -A config worker --pool=solo` process per
queue family (`-Q events`, `-Q webhooks`) on the benchmark's own Redis broker database
(cleaned before and after), the receivers (bench/receiver.py) and daphne with the SSE load
(bench/sse_load.py). Every count is bounded (scaled by BENCH_SCALE) and every wait has a
deadline.

- `webhook_throughput`: N events (BENCH_WEBHOOK_EVENTS, default 2000) emitted in one
  transaction; deliveries/s = N / (last receipt - commit). One endpoint.
- `webhook_slow_mix`: E events (BENCH_WEBHOOK_MIX_EVENTS, 20,000) spread over 4 endpoints
  (one event type each), one of which answers after BENCH_WEBHOOK_SLOW_SECONDS (1 s);
  emitted in transactions of 1,000. Deliveries/s to the three fast endpoints = their
  deliveries / (their last receipt - the first commit); each `webhook-id` must arrive once
  and none may be missing; the slow endpoint's receipts so far are counted (it cannot
  finish: its cap of WEBHOOK_ENDPOINT_CONCURRENCY requests a second).
- `webhook_latency`: M events (BENCH_WEBHOOK_LATENCY_EVENTS, 200) emitted one per
  transaction at BENCH_WEBHOOK_LATENCY_RATE (10/s: no queue builds up); p50/p99 of
  receipt - emit, and when the fan-out had finished.
- `sse_latency`: S concurrent streams (BENCH_SSE_STREAMS, 500) on one daphne process, then
  E events (BENCH_SSE_EVENTS, 50) at BENCH_SSE_RATE (1/s); p50/p99 of receipt - emit over
  every (stream, event), and the share of streams that received every event.
"""

from __future__ import annotations

import math
import os
import secrets
import time
from contextlib import ExitStack

from config import queues

from .base import BenchContext, Measurement, Scenario
from .env import scaled, server_environ
from .procs import (
    CeleryWorker,
    Daphne,
    LineProcess,
    Receiver,
    check_broker,
    clean_broker,
    clean_channel_groups,
    wait_until,
)
from .server import ServerError

BENCH_MARK = "bench: event scenarios"  # the description of the benchmark's endpoints
TYPE_PREFIX = "bench."
WEBHOOK_TYPE = "bench.webhook"
SSE_TYPE = "bench.sse"
PROBE_TYPE = "bench.probe"
WARMUP_EVENTS = 20


def _rate(name: str, default: float) -> float:
    raw = os.environ.get(name, "")
    try:
        value = float(raw) if raw else default
    except ValueError:
        raise SystemExit(f"bench: {name} must be a number, got {raw!r}") from None
    return max(0.1, value)


def percentile(values: list[float], pct: float) -> float | None:
    """Nearest-rank percentile."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[max(1, math.ceil(len(ordered) * pct / 100)) - 1]


# --- Helpers in the harness process (Django loaded) ------------------------------------


def _organization(ctx: BenchContext):
    from platform_core.tenancy.models import Organization

    return Organization.objects.get(pk=ctx.seed.org_id)


def _reset(org) -> None:
    """Remove what a previous (possibly interrupted) run left: endpoints, events, groups."""
    from platform_core.events.bus import DRAIN as EVENTS_DRAIN
    from platform_core.events.models import Event
    from platform_core.webhooks.models import WebhookEndpoint
    from platform_core.webhooks.services import DRAIN as WEBHOOKS_DRAIN

    WebhookEndpoint.objects.for_organization(org).filter(description=BENCH_MARK).delete()
    Event.objects.for_organization(org).filter(type__startswith=TYPE_PREFIX).delete()
    clean_channel_groups()
    # A drain queued on the cleaned broker would leave its flag set for a few seconds.
    EVENTS_DRAIN.clear()
    WEBHOOKS_DRAIN.clear()


def _emit(org, event_type: str, run: str, seq: int):
    from platform_core.events.bus import emit

    return emit(organization=org, type=event_type,
                data={"bench_run": run, "bench_seq": seq, "bench_sent": time.monotonic()})


def _wait_worker_ready(org, worker: CeleryWorker, *, timeout: float = 90) -> None:
    """The worker consumes: a probe event is fanned out (its outbox row dispatched)."""
    from platform_core.events.models import Event

    event = _emit(org, PROBE_TYPE, "probe", 0)
    rows = Event.objects.for_organization(org).filter(pk=event.pk, dispatched_at__isnull=False)
    wait_until(rows.exists, timeout=timeout, what="the Celery worker to fan out a probe event",
               watch=[worker], interval=0.1)


def _fanout_ms(org, run: str) -> list[float]:
    """Per event of `run`: emit (created_at) to the end of its fan-out (dispatched_at)."""
    from platform_core.events.models import Event

    rows = (Event.objects.for_organization(org).filter(data__bench_run=run)
            .exclude(dispatched_at=None).values_list("created_at", "dispatched_at"))
    return [(done - created).total_seconds() * 1000 for created, done in rows]


class EventScenario(Scenario):
    """Common plumbing: preconditions, the worker, cleanup, errors as RuntimeError."""

    needs_server = False

    def check(self, ctx: BenchContext) -> None:
        env = server_environ()
        try:
            check_broker(env["CELERY_BROKER_URL"])
        except ServerError as exc:
            raise AssertionError(str(exc)) from None
        if not env.get("REDIS_URL"):
            raise AssertionError("REDIS_URL is required (feed and channel layer)")

    def warm_up(self, ctx: BenchContext, *, seconds: int) -> None:
        """Nothing here: each measurement warms its own subprocesses up first."""

    def measure(self, ctx: BenchContext, *, seconds: int) -> Measurement:
        env = server_environ()
        broker = env["CELERY_BROKER_URL"]
        org = _organization(ctx)
        try:
            with ExitStack() as stack:
                clean_broker(broker)
                stack.callback(clean_broker, broker)
                _reset(org)
                stack.callback(_reset, org)
                return self.run(ctx, org, env, stack)
        except (ServerError, AssertionError) as exc:
            raise RuntimeError(str(exc)) from exc
        except Exception as exc:
            raise RuntimeError(f"{type(exc).__name__}: {exc}") from exc

    def run(self, ctx: BenchContext, org, env: dict[str, str], stack: ExitStack) -> Measurement:
        raise NotImplementedError

    def start_worker(self, org, env: dict[str, str], stack: ExitStack) -> CeleryWorker:
        """One worker per queue family: the fan-out (events) and the deliveries (webhooks).
        The events worker is returned (watched); the webhooks one is checked by the
        warm-up deliveries."""
        worker = stack.enter_context(CeleryWorker(env=env, queues=(queues.EVENTS,)))
        self.webhooks_worker = stack.enter_context(
            CeleryWorker(env=env, queues=(queues.WEBHOOKS,)))
        _wait_worker_ready(org, worker)
        return worker


class _WebhookScenario(EventScenario):
    def start_webhook_rig(self, org, env, stack) -> tuple[CeleryWorker, Receiver]:
        from platform_core.webhooks import services

        receiver = stack.enter_context(Receiver(env=env))
        services.endpoint_create(organization=org, url=receiver.url, events=[WEBHOOK_TYPE],
                                 description=BENCH_MARK)
        worker = self.start_worker(org, env, stack)
        # Warm-up: the worker's first deliveries (connection to the receiver, code paths).
        for i in range(WARMUP_EVENTS):
            _emit(org, WEBHOOK_TYPE, "warmup", i)
        if not self.wait_received(receiver, worker, WARMUP_EVENTS, timeout=60):
            raise ServerError(f"the {WARMUP_EVENTS} warm-up deliveries did not all arrive"
                              f" within 60s ({receiver.count()} did)")
        return worker, receiver

    @staticmethod
    def wait_received(receiver: Receiver, worker: CeleryWorker, count: int, *,
                      timeout: float) -> bool:
        try:
            wait_until(lambda: receiver.count() >= count, timeout=timeout,
                       what=f"{count} webhook deliveries", watch=[worker, receiver],
                       interval=0.05)
            return True
        except ServerError:
            worker.check_alive()
            receiver.check_alive()
            return False

    @staticmethod
    def arrivals(receiver: Receiver, run: str) -> tuple[dict[str, dict], int]:
        """The first receipt of each event of `run`, and the number of repeated receipts
        (deliveries are at least once)."""
        first: dict[str, dict] = {}
        repeats = 0
        for record in receiver.records():
            if record["run"] != run:
                continue
            if record["id"] in first:
                repeats += 1
            else:
                first[record["id"]] = record
        return first, repeats


class WebhookThroughput(_WebhookScenario):
    name = "webhook_throughput"

    def __init__(self):
        self.events = scaled("BENCH_WEBHOOK_EVENTS", 2000)
        self.title = (f"Webhook deliveries/s, one worker per queue family (solo),"
                      f" {self.events:,} events (req/s = deliveries/s)")

    def run(self, ctx, org, env, stack) -> Measurement:
        from django.db import transaction

        worker, receiver = self.start_webhook_rig(org, env, stack)
        run = secrets.token_hex(6)
        before = receiver.count()
        with transaction.atomic():
            for i in range(self.events):
                _emit(org, WEBHOOK_TYPE, run, i)
            committed = time.monotonic()  # the on_commit hooks queue the fan-outs next
        queued = time.monotonic() - committed
        complete = self.wait_received(receiver, worker, before + self.events,
                                      timeout=60 + self.events * 0.25)
        first, duplicates = self.arrivals(receiver, run)
        missing = self.events - len(first)
        if not first:
            raise RuntimeError("no delivery arrived")
        last = max(r["t"] for r in first.values())
        elapsed = last - committed
        return Measurement(
            scenario=self.name, title=self.title,
            requests_per_second=len(first) / elapsed if elapsed > 0 else None,
            requests=len(first), errors=missing,
            notes=(f"{len(first):,}/{self.events:,} delivered in {elapsed:.1f}s after commit"
                   f" (fan-outs queued in {queued:.2f}s); duplicates {duplicates}"
                   + ("" if complete else "; timed out")),
        )


class WebhookLatency(_WebhookScenario):
    name = "webhook_latency"

    def __init__(self):
        self.events = scaled("BENCH_WEBHOOK_LATENCY_EVENTS", 200)
        # Well under one worker's capacity (about 20-50 deliveries/s here), so that the
        # figure is the path's latency, not a queue's.
        self.rate = _rate("BENCH_WEBHOOK_LATENCY_RATE", 10)
        self.title = (f"Webhook latency emit -> receipt, {self.events:,} events at"
                      f" {self.rate:g}/s")

    def run(self, ctx, org, env, stack) -> Measurement:
        worker, receiver = self.start_webhook_rig(org, env, stack)
        run = secrets.token_hex(6)
        before = receiver.count()
        started = time.monotonic()
        for i in range(self.events):  # autocommit: each emit commits and queues at once
            pause = started + i / self.rate - time.monotonic()
            if pause > 0:
                time.sleep(pause)
            _emit(org, WEBHOOK_TYPE, run, i)
        complete = self.wait_received(receiver, worker, before + self.events, timeout=60)
        first, duplicates = self.arrivals(receiver, run)
        latencies = [(r["t"] - r["sent"]) * 1000 for r in first.values()]
        if not latencies:
            raise RuntimeError("no delivery arrived")
        fanout = _fanout_ms(org, run)
        return Measurement(
            scenario=self.name, title=self.title,
            p50_ms=percentile(latencies, 50), p99_ms=percentile(latencies, 99),
            requests=len(first), errors=self.events - len(first),
            notes=(f"{len(first):,}/{self.events:,} delivered; max {max(latencies):.1f} ms;"
                   " path: emit -> events.drain -> webhooks fan-out -> webhooks.drain"
                   " -> POST; the fan-out had finished p50"
                   f" {percentile(fanout, 50) or 0:.1f} / p99 {percentile(fanout, 99) or 0:.1f}"
                   f" ms after emit; duplicates {duplicates}"
                   + ("" if complete else "; timed out")),
        )


class SSELatency(EventScenario):
    name = "sse_latency"

    def __init__(self):
        self.streams = scaled("BENCH_SSE_STREAMS", 500)
        self.events = scaled("BENCH_SSE_EVENTS", 50)
        # One event a second: each event is one channel message per stream (500 here),
        # and the figure should be the fan-out's latency, not a growing backlog.
        self.rate = _rate("BENCH_SSE_RATE", 1)
        self.title = (f"SSE latency emit -> receipt, {self.streams:,} streams x"
                      f" {self.events:,} events at {self.rate:g}/s")

    def run(self, ctx, org, env, stack) -> Measurement:
        import resource

        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        want = self.streams * 2 + 512  # daphne inherits the limit: one fd per stream
        if soft != resource.RLIM_INFINITY and soft < want:
            resource.setrlimit(resource.RLIMIT_NOFILE, (
                want if hard == resource.RLIM_INFINITY else min(want, hard), hard))
        daphne = stack.enter_context(Daphne(env=env))
        worker = self.start_worker(org, env, stack)
        run = secrets.token_hex(6)
        load = LineProcess(
            "bench.sse_load",
            ["--port", str(daphne.port), "--streams", str(self.streams),
             "--events", str(self.events), "--run", run, "--max-seconds", "300"],
            env={**env, "BENCH_SSE_KEY": ctx.seed.raw_key}, log_name="sse-load.log",
        )
        load.label = "the SSE load"
        stack.enter_context(load)
        ready = load.read_line(timeout=180)
        if not ready or not ready.startswith("READY "):
            raise RuntimeError(f"the SSE load said {ready!r}")
        connected, failed = (int(v) for v in ready.split()[1:3])
        if not connected:
            load.send_line("STOP")
            result = self._result(load)
            raise RuntimeError(f"no stream opened ({failed} failed: {result.get('first_error')})")
        # Warm-up: the first group messages through daphne (not counted: another run id).
        for i in range(3):
            _emit(org, SSE_TYPE, "warmup", i)
        time.sleep(1.0)
        started = time.monotonic()
        for i in range(self.events):
            pause = started + i / self.rate - time.monotonic()
            if pause > 0:
                time.sleep(pause)
            _emit(org, SSE_TYPE, run, i)
        deadline = time.monotonic() + 30
        complete = False
        while not complete and time.monotonic() < deadline:
            worker.check_alive()
            daphne.check_alive()
            line = load.read_line(timeout=max(0.1, min(1.0, deadline - time.monotonic())),
                                  required=False)
            complete = line == "COMPLETE"
        load.send_line("STOP")
        result = self._result(load)
        share = result["complete"] / self.streams
        return Measurement(
            scenario=self.name, title=self.title,
            p50_ms=result["p50_ms"], p99_ms=result["p99_ms"],
            requests=result["received"], errors=result["expected"] - result["received"],
            notes=(f"{share:.1%} of {self.streams:,} streams received every event"
                   f" ({result['connected']:,} opened, {failed} failed to open);"
                   f" {result['received']:,}/{result['expected']:,} receipts; max"
                   f" {result['max_ms'] or 0:.1f} ms; first to last stream per event p50"
                   f" {result['spread_p50_ms'] or 0:.1f} ms, max {result['spread_max_ms'] or 0:.1f}"
                   f" ms; duplicates {result['duplicates']}"
                   + (f"; first stream error: {result['first_error']}"
                      if result["first_error"] else "")),
        )

    @staticmethod
    def _result(load: LineProcess) -> dict:
        import json

        while True:
            line = load.read_line(timeout=60)
            if line and line.startswith("RESULT "):
                return json.loads(line[len("RESULT "):])


class WebhookSlowMix(_WebhookScenario):
    name = "webhook_slow_mix"
    endpoints = 4

    def __init__(self):
        self.events = scaled("BENCH_WEBHOOK_MIX_EVENTS", 20000)
        self.slow_seconds = _rate("BENCH_WEBHOOK_SLOW_SECONDS", 1.0)
        self.title = (f"Webhook deliveries/s to 3 fast endpoints, {self.events:,} events over"
                      f" {self.endpoints} endpoints, one answering in {self.slow_seconds:g} s")

    def run(self, ctx, org, env, stack) -> Measurement:
        from django.db import transaction

        from platform_core.events.bus import emit_batch
        from platform_core.webhooks import services

        # Endpoint 0 is the slow one; each endpoint gets its own event type.
        receivers = [stack.enter_context(Receiver(
            env=env, delay=self.slow_seconds if i == 0 else 0.0, name=f"receiver-{i}"))
            for i in range(self.endpoints)]
        for i, receiver in enumerate(receivers):
            services.endpoint_create(organization=org, url=receiver.url,
                                     events=[f"{WEBHOOK_TYPE}.{i}", WEBHOOK_TYPE],
                                     description=BENCH_MARK)
        worker = self.start_worker(org, env, stack)
        fast = receivers[1:]
        for i in range(WARMUP_EVENTS):  # reaches every endpoint (the shared type)
            _emit(org, WEBHOOK_TYPE, "warmup", i)
        for receiver in fast:
            if not self.wait_received(receiver, worker, WARMUP_EVENTS, timeout=60):
                raise ServerError("the warm-up deliveries did not all arrive within 60s")
        run = secrets.token_hex(6)
        before = [r.count() for r in receivers]
        started = time.monotonic()
        chunk = 1000
        for first in range(0, self.events, chunk):
            with transaction.atomic():
                emit_batch([(org, f"{WEBHOOK_TYPE}.{n % self.endpoints}",
                             {"bench_run": run, "bench_seq": n, "bench_sent": time.monotonic()})
                            for n in range(first, min(first + chunk, self.events))])
        emitted = time.monotonic() - started
        owed = [len(range(i, self.events, self.endpoints)) for i in range(self.endpoints)]
        complete = all(
            self.wait_received(r, worker, before[i + 1] + owed[i + 1],
                               timeout=60 + self.events * 0.01)
            for i, r in enumerate(fast))
        self.webhooks_worker.check_alive()
        fast_first, duplicates, last = 0, 0, started
        for receiver in fast:
            first, repeats = self.arrivals(receiver, run)
            fast_first += len(first)
            duplicates += repeats
            if first:
                last = max(last, max(r["t"] for r in first.values()))
        slow_first, slow_repeats = self.arrivals(receivers[0], run)
        missing = sum(owed[1:]) - fast_first
        elapsed = last - started
        rate = fast_first / elapsed if elapsed > 0 else None
        return Measurement(
            scenario=self.name, title=self.title,
            requests_per_second=rate, requests=fast_first, errors=missing + duplicates,
            notes=(f"{fast_first:,}/{sum(owed[1:]):,} delivered to the fast endpoints in"
                   f" {elapsed:.1f}s from the first commit (emitting took {emitted:.1f}s);"
                   f" duplicates {duplicates}; the slow endpoint meanwhile received"
                   f" {len(slow_first):,}/{owed[0]:,} (duplicates {slow_repeats}, one"
                   f" answer per {self.slow_seconds:g} s per slot)"
                   + ("" if complete else "; timed out")),
            figures={"fast_per_second": rate or 0.0, "duplicates": duplicates + slow_repeats,
                     "missing": missing},
        )


EVENT_SCENARIOS: list[Scenario] = [WebhookThroughput(), WebhookSlowMix(), WebhookLatency(),
                                   SSELatency()]
