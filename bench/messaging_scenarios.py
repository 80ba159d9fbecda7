"""The messaging scenarios of `make bench` (issue 6, "Done means").

Both use a sandbox (test-mode) organization of their own, `bench-sandbox`, with a `*` test
key (bench/contacts_data.py): the bench organization is live, and a live send needs a
provider account. Its messages and events are deleted before and after each scenario.

- `message_send`: accepted sends per second for POST /api/v1/messages, loaded with wrk
  against the harness's gunicorn. Each request posts `{"channel": "sms", "to": <a random
  valid +1 415 number>, "body": ...}` (wrk's Lua `request` hook), so no two sends share a
  recipient the way a real campaign's don't. A send answers 202 with the queued message
  (one INSERT, messaging/acceptance.py) and kicks the batch dispatcher, which queues at
  most one `messaging.dispatch_accepted` task for the deployment on the Celery broker
  (messaging/dispatcher.py): the harness's gunicorn already uses the benchmark's own Redis database
  (BENCH_BROKER_URL, default db 9) and no worker runs during this scenario, so the figure
  is the API's acceptance alone. The queued Celery keys are deleted afterwards (never
  FLUSHDB). Target: at least 40% of the floor's throughput.
- `message_delivery`: messages per second through the sandbox provider to `delivered`
  with one Celery worker process per queue family (`celery -A config worker --pool=solo
  -Q <family>` for sends, events, webhooks and default, `FamilyWorkers`) whose settings
  (bench/worker_settings.py) make the sandbox receipt immediate (BENCH_SANDBOX_RECEIPT_DELAY,
  default 0 s: the send batch applies it). N sends (BENCH_MESSAGES, default 20,000) are
  accepted through `messaging.services.message_send` in one transaction, so they are all
  in the table at commit; the `sends` worker then drains them in batches (claim, announce,
  provider call, `sent` then `delivered`, messaging/sending/drain.py) while the `events`
  worker fans their events out. messages/s = delivered / (last `delivered_at` - commit),
  polled in the database until all are delivered or a deadline passes. None is sent twice:
  the `message.sent` events of the run are counted against their distinct messages. A run
  of BENCH_MESSAGES_SMALL (2,000) comes first, and the `sends` worker's peak resident
  memory is sampled during both runs (figures `rss_small_mib`, `rss_large_mib`): the
  backlog lives in the table, not in the worker.
"""

from __future__ import annotations

import os
import random
import secrets
import time
from contextlib import ExitStack

from config.queues import ALL as QUEUES
from config.queues import SENDS

from . import contacts_data as data
from .base import BenchContext, Measurement, Scenario
from .env import scaled, server_environ
from .event_scenarios import percentile
from .memory import RssSampler
from .post import PostScenario
from .procs import CeleryWorker, check_broker, clean_broker, wait_until
from .server import ServerError

SEND_PATH = "/api/v1/messages"
WARMUP_MESSAGES = 20

# A random valid US number per request (+1 415 220-0000 .. 299-9999), a thread seed each.
RANDOM_SEND_LUA = """
local threads = 0
setup = function(thread)
  threads = threads + 1
  thread:set("thread_no", threads)
end
local counter = 0
init = function(args)
  math.randomseed(os.time() * 1000 + (thread_no or 0))
end
request = function()
  counter = counter + 1
  local to = string.format("+1415%03d%04d", math.random(220, 299), math.random(0, 9999))
  return wrk.format(nil, nil, nil,
    '{"channel": "sms", "to": "' .. to .. '", "body": "bench send ' .. counter .. '"}')
end
"""


def random_number(rng: random.Random) -> str:
    return f"+1415{rng.randint(220, 299):03d}{rng.randint(0, 9999):04d}"


def _sandbox_org(ctx: BenchContext):
    from platform_core.tenancy.models import Organization

    return Organization.objects.get(pk=ctx.values["sandbox_org_id"])


def ensure_sandbox(ctx: BenchContext) -> None:
    if "sandbox_key" not in ctx.values:
        try:
            org_id, key = data.ensure_sandbox_org()
        except Exception as exc:
            raise RuntimeError(f"sandbox organization: {type(exc).__name__}: {exc}") from exc
        ctx.values["sandbox_org_id"], ctx.values["sandbox_key"] = org_id, key


def _broker() -> str:
    return server_environ()["CELERY_BROKER_URL"]


def _clean(ctx: BenchContext) -> None:
    """What accepted sends left: the queued Celery tasks, the messages and their events.

    The dispatcher's pending flag goes with the tasks: it says a dispatcher is queued, and
    left behind it would make the next scenario's kicks wait for its expiry and the beat."""
    from django.core.cache import cache

    from messaging.dispatcher import PENDING_FLAG

    clean_broker(_broker())
    cache.delete(PENDING_FLAG)
    data.clear_sandbox_messages(_sandbox_org(ctx))


def _settle_then_clean(ctx: BenchContext) -> None:
    """After wrk stops, the server still finishes the requests in flight: wait until no
    message has been added for 0.5 s (10 s at most), then clean."""
    from messaging.models import Message

    rows = Message.objects.for_organization(_sandbox_org(ctx))
    deadline = time.monotonic() + 10
    last = -1
    while time.monotonic() < deadline:
        count = rows.count()
        if count == last:
            break
        last = count
        time.sleep(0.5)
    _clean(ctx)


def prepare_send(ctx: BenchContext) -> None:
    ensure_sandbox(ctx)
    try:
        check_broker(_broker())
    except ServerError as exc:
        raise AssertionError(str(exc)) from None
    _clean(ctx)


def _expect_send(ctx: BenchContext, answer) -> str | None:
    body = answer.get("data", {}) if isinstance(answer, dict) else {}
    if body.get("status") != "queued" or not str(body.get("id", "")).startswith("msg"):
        return f"the send was not queued: {str(answer)[:300]}"
    return None


class FamilyWorker(CeleryWorker):
    """One solo worker process serving one queue family (config/queues.py)."""

    def __init__(self, *, env: dict[str, str], queue: str):
        super().__init__(env=env)
        self.label = f"the {queue} worker"
        self.command += ["-Q", queue]
        self.command[self.command.index("-n") + 1] = f"bench-{queue}-{os.getpid()}@%h"
        self.log_path = self.log_path.with_name(f"celery-worker-{queue}.log")


class FamilyWorkers:
    """One worker process per queue family, started together; `sends` is the one that
    sends (its pid is what the memory figures sample)."""

    def __init__(self, *, env: dict[str, str]):
        self.workers = {queue: FamilyWorker(env=env, queue=queue) for queue in QUEUES}

    def __enter__(self) -> FamilyWorkers:
        with ExitStack() as stack:
            for worker in self.workers.values():
                stack.enter_context(worker)
            self._stack = stack.pop_all()
        return self

    def __exit__(self, *exc_info) -> None:
        self._stack.close()

    @property
    def sends(self) -> FamilyWorker:
        return self.workers[SENDS]

    def check_alive(self) -> None:
        for worker in self.workers.values():
            worker.check_alive()

    def log_tail(self) -> str:
        return "\n".join(f"-- {q}:\n{w.log_tail(10)}" for q, w in self.workers.items())


def family_workers() -> FamilyWorkers:
    env = {**server_environ(), "DJANGO_SETTINGS_MODULE": "bench.worker_settings"}
    env.setdefault("BENCH_SANDBOX_RECEIPT_DELAY", "0")
    return FamilyWorkers(env=env)


def sent_twice(org, since) -> tuple[int, int]:
    """(`message.sent` events, distinct messages they name) of `org` since `since`."""
    from django.db import connection

    from platform_core.events.models import Event

    table = Event._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT count(*), count(DISTINCT data->>'message_id') FROM {table}"  # noqa: S608
            " WHERE organization_id = %s AND type = 'message.sent' AND created_at >= %s",
            [org.pk, since])
        events, messages = cursor.fetchone()
    return events, messages


class MessageDelivery(Scenario):
    name = "message_delivery"
    needs_server = False

    def __init__(self):
        self.messages = scaled("BENCH_MESSAGES", 20_000, minimum=10)
        self.small = min(self.messages, scaled("BENCH_MESSAGES_SMALL", 2_000, minimum=10))
        self.title = (f"Messages/s to delivered, sandbox provider, 1 solo worker per queue"
                      f" family, {self.messages:,} sends (req/s = messages/s)")

    def prepare(self, ctx: BenchContext) -> None:
        ensure_sandbox(ctx)

    def check(self, ctx: BenchContext) -> None:
        try:
            check_broker(_broker())
        except ServerError as exc:
            raise AssertionError(str(exc)) from None

    def warm_up(self, ctx: BenchContext, *, seconds: int) -> None:
        """The measurement warms its own workers up first."""

    @staticmethod
    def _send_batch(org, run: str, count: int, rng: random.Random) -> float:
        """`count` accepted sends in one transaction; the wall-clock time of the commit."""
        from django.db import transaction

        from messaging import services
        from platform_core.tenancy.context import tenant_context

        with tenant_context(org), transaction.atomic():
            for i in range(count):
                services.message_send(organization=org, channel="sms",
                                      to=random_number(rng), body=f"bench {run} {i}")
            committed = time.time()  # the on_commit hooks queue the tasks next
        return committed

    @staticmethod
    def _rows(org, run: str):
        from messaging.models import Message

        return Message.objects.for_organization(org).filter(body__startswith=f"bench {run} ")

    def measure(self, ctx: BenchContext, *, seconds: int) -> Measurement:
        org = _sandbox_org(ctx)
        rng = random.Random()
        try:
            with ExitStack() as stack:
                _clean(ctx)
                stack.callback(_clean, ctx)
                workers = stack.enter_context(family_workers())
                # Ready and warm: the first messages go all the way to delivered.
                warm = secrets.token_hex(4)
                self._send_batch(org, warm, WARMUP_MESSAGES, rng)
                warm_rows = self._rows(org, warm).filter(status="delivered")
                wait_until(lambda: warm_rows.count() >= WARMUP_MESSAGES, timeout=120,
                           what=f"the workers to deliver {WARMUP_MESSAGES} warm-up messages",
                           watch=list(workers.workers.values()), interval=0.2)
                small = self._run(org, workers, rng, self.small)
                large = self._run(org, workers, rng, self.messages)
                return self._measurement(small, large)
        except (ServerError, AssertionError) as exc:
            raise RuntimeError(str(exc)) from exc
        except Exception as exc:  # a database or broker error: this scenario is not measured
            raise RuntimeError(f"{type(exc).__name__}: {exc}") from exc

    def _run(self, org, workers: FamilyWorkers, rng: random.Random, count: int) -> dict:
        from datetime import UTC, datetime

        from django.db.models import Count, Max

        run = secrets.token_hex(4)
        started = time.time()
        since = datetime.fromtimestamp(started, tz=UTC)
        rows = self._rows(org, run)
        settled = ("delivered", "failed", "undelivered", "expired", "canceled")
        with RssSampler(workers.sends.process.pid) as rss:
            committed = self._send_batch(org, run, count, rng)
            deadline = time.monotonic() + 60 + count * 0.5
            complete = False
            while time.monotonic() < deadline:
                workers.check_alive()
                if rows.filter(status__in=settled).count() >= count:
                    complete = True
                    break
                time.sleep(0.25)
        by_status = dict(rows.values_list("status").annotate(n=Count("pk")).order_by())
        delivered = rows.filter(status="delivered")
        last = delivered.aggregate(last=Max("delivered_at"), sent=Max("sent_at"))
        done = by_status.get("delivered", 0)
        if not done:
            raise RuntimeError(f"no message was delivered ({by_status});"
                               f" workers:\n{workers.log_tail()}")
        latencies = [(d.timestamp() - committed) * 1000
                     for d in delivered.values_list("delivered_at", flat=True)]
        return {"count": count, "done": done, "committed": committed,
                "accept_seconds": committed - started,
                "elapsed": last["last"].timestamp() - committed,
                "sent_elapsed": last["sent"].timestamp() - committed,
                "latencies": latencies, "by_status": by_status, "complete": complete,
                "sent_events": sent_twice(org, since), "rss_mib": rss.peak_kib / 1024}

    def _measurement(self, small: dict, large: dict) -> Measurement:
        events, distinct = large["sent_events"]
        twice = events - distinct
        elapsed, done, count = large["elapsed"], large["done"], large["count"]
        latencies = large["latencies"]
        return Measurement(
            scenario=self.name, title=self.title,
            requests_per_second=done / elapsed if elapsed > 0 else None,
            requests=done, errors=count - done + twice,
            notes=(f"{done:,}/{count:,} delivered in {elapsed:.1f}s after commit"
                   f" (all sent after {large['sent_elapsed']:.1f}s); accepted in-process in"
                   f" {large['accept_seconds']:.1f}s"
                   f" ({count / large['accept_seconds']:,.0f}/s);"
                   f" commit -> delivered p50 {percentile(latencies, 50) / 1000:.1f}s,"
                   f" p99 {percentile(latencies, 99) / 1000:.1f}s (a backlog: all are queued"
                   f" at once); {events:,} message.sent events for {distinct:,} messages"
                   f" ({twice} sent twice); statuses {large['by_status']}"
                   + ("" if large["complete"] else "; timed out")
                   + f"; sends worker peak RSS {small['rss_mib']:.1f} MiB with a"
                   f" {small['count']:,} backlog ({small['done'] / small['elapsed']:,.0f}"
                   f" msg/s), {large['rss_mib']:.1f} MiB with {count:,}"),
            figures={"rss_small_mib": small["rss_mib"], "rss_large_mib": large["rss_mib"],
                     "backlog_small": float(small["count"]), "sent_twice": float(twice)},
        )


MESSAGING_SCENARIOS: list[Scenario] = [
    PostScenario(
        name="message_send",
        title="Accepted sends (POST /api/v1/messages, sms, sandbox org, no worker)",
        path=SEND_PATH,
        body=lambda ctx: {"channel": "sms", "to": "+14152201234", "body": "bench send"},
        key_fn=lambda ctx: ctx.values["sandbox_key"],
        expect_status=202,
        expect=_expect_send,
        prepare_fn=prepare_send,
        extra_lua=lambda ctx: RANDOM_SEND_LUA,
        after_fn=_settle_then_clean,
    ),
    MessageDelivery(),
]
