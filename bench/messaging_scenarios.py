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
  with ONE worker process (`celery -A config worker --pool=solo`, bench/procs.py) whose
  settings (bench/worker_settings.py) make the sandbox receipt immediate
  (BENCH_SANDBOX_RECEIPT_DELAY, default 0 s). N sends (BENCH_MESSAGES, default 2000) are
  accepted through `messaging.services.message_send` in one transaction, so they are
  queued together at commit; the worker then runs, per message, the send task (provider
  call, `sent`), the receipt task (`delivered`) and the three event fan-outs (queued, sent,
  delivered). messages/s = delivered / (last `delivered_at` - commit), polled in the
  database until all are delivered or a deadline passes.
"""

from __future__ import annotations

import random
import secrets
import time
from contextlib import ExitStack

from . import contacts_data as data
from .base import BenchContext, Measurement, Scenario
from .env import scaled, server_environ
from .event_scenarios import percentile
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


def _prepare_send(ctx: BenchContext) -> None:
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


class MessageDelivery(Scenario):
    name = "message_delivery"
    needs_server = False

    def __init__(self):
        self.messages = scaled("BENCH_MESSAGES", 2000, minimum=10)
        self.title = (f"Messages/s to delivered, sandbox provider, 1 Celery worker (solo),"
                      f" {self.messages:,} sends (req/s = messages/s)")

    def prepare(self, ctx: BenchContext) -> None:
        ensure_sandbox(ctx)

    def check(self, ctx: BenchContext) -> None:
        try:
            check_broker(_broker())
        except ServerError as exc:
            raise AssertionError(str(exc)) from None

    def warm_up(self, ctx: BenchContext, *, seconds: int) -> None:
        """The measurement warms its own worker up first."""

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
        env = {**server_environ(), "DJANGO_SETTINGS_MODULE": "bench.worker_settings"}
        env.setdefault("BENCH_SANDBOX_RECEIPT_DELAY", "0")
        org = _sandbox_org(ctx)
        rng = random.Random()
        try:
            with ExitStack() as stack:
                _clean(ctx)
                stack.callback(_clean, ctx)
                worker = stack.enter_context(CeleryWorker(env=env))
                # Ready and warm: the first messages go all the way to delivered.
                warm = secrets.token_hex(4)
                self._send_batch(org, warm, WARMUP_MESSAGES, rng)
                warm_rows = self._rows(org, warm).filter(status="delivered")
                wait_until(lambda: warm_rows.count() >= WARMUP_MESSAGES, timeout=120,
                           what=f"the worker to deliver {WARMUP_MESSAGES} warm-up messages",
                           watch=[worker], interval=0.2)
                return self._run(org, worker, rng)
        except (ServerError, AssertionError) as exc:
            raise RuntimeError(str(exc)) from exc
        except Exception as exc:  # a database or broker error: this scenario is not measured
            raise RuntimeError(f"{type(exc).__name__}: {exc}") from exc

    def _run(self, org, worker: CeleryWorker, rng: random.Random) -> Measurement:
        from django.db.models import Count, Max

        run = secrets.token_hex(4)
        started = time.time()
        committed = self._send_batch(org, run, self.messages, rng)
        accept_seconds = committed - started
        rows = self._rows(org, run)
        settled = ("delivered", "failed", "undelivered", "expired", "canceled")
        deadline = time.monotonic() + 60 + self.messages * 0.5
        complete = False
        while time.monotonic() < deadline:
            worker.check_alive()
            if rows.filter(status__in=settled).count() >= self.messages:
                complete = True
                break
            time.sleep(0.25)
        by_status = dict(rows.values_list("status").annotate(n=Count("pk")).order_by())
        delivered = rows.filter(status="delivered")
        last = delivered.aggregate(last=Max("delivered_at"), sent=Max("sent_at"))
        done = by_status.get("delivered", 0)
        if not done:
            raise RuntimeError(f"no message was delivered ({by_status})")
        elapsed = last["last"].timestamp() - committed
        sent_elapsed = last["sent"].timestamp() - committed
        latencies = [(d.timestamp() - committed) * 1000
                     for d in delivered.values_list("delivered_at", flat=True)]
        return Measurement(
            scenario=self.name, title=self.title,
            requests_per_second=done / elapsed if elapsed > 0 else None,
            requests=done, errors=self.messages - done,
            notes=(f"{done:,}/{self.messages:,} delivered in {elapsed:.1f}s after commit"
                   f" (all sent after {sent_elapsed:.1f}s); accepted in-process in"
                   f" {accept_seconds:.1f}s ({self.messages / accept_seconds:,.0f}/s);"
                   f" commit -> delivered p50 {percentile(latencies, 50) / 1000:.1f}s,"
                   f" p99 {percentile(latencies, 99) / 1000:.1f}s (a backlog: all are queued"
                   f" at once); statuses {by_status}" + ("" if complete else "; timed out")),
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
        prepare_fn=_prepare_send,
        extra_lua=lambda ctx: RANDOM_SEND_LUA,
        after_fn=_settle_then_clean,
    ),
    MessageDelivery(),
]
