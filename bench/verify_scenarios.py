"""The verify scenarios of `make bench` (issue 14, "Done means").

Both run in the sandbox organization of the messaging scenarios (`bench-sandbox`, test
mode: the sandbox double, no outside call) with its fraud guard turned off through the
documented per-organization override (`VerifySettings.fraud_guard_enabled`): the load
sends thousands of codes that are never checked, which is exactly what the guard's
conversion rule blocks. Verifications, messages and events are deleted before and after.

- `verify_send`: verification sends per second, POST /api/v1/verify/send loaded with wrk
  against the harness's gunicorn, each request to a random valid US number (wrk's Lua
  `request` hook). A send validates, draws and hashes the code, hands the message to the
  messaging pipeline (one INSERT), supersedes the recipient's open code, inserts the
  verification and its event: 201 `sent`. No worker runs (the API's acceptance alone).
- `verify_bulk_1000`: one POST /api/v1/verify/bulk of 1,000 fresh recipients end to end:
  the request's own time (target: under 5 s, issue 14) and then, with one solo Celery
  worker per queue family as in production (`messaging_scenarios.family_workers`, the
  `sends` one sending; immediate sandbox receipts), the time until all 1,000 messages are
  `delivered`. Repeated BENCH_VERIFY_BULK_ROUNDS times (default 3); the median is kept.
"""

from __future__ import annotations

import random
import statistics
import time
from contextlib import ExitStack

from .base import BenchContext, Measurement, Scenario
from .messaging_scenarios import (
    FamilyWorkers,
    _clean,
    family_workers,
    prepare_send,
)
from .post import PostScenario, http_post_json
from .procs import wait_until
from .server import ServerError

SEND_PATH = "/api/v1/verify/send"
BULK_PATH = "/api/v1/verify/bulk"
BULK_SIZE = 1000
BULK_TARGET_SECONDS = 5.0
# Valid US area codes: spread over many destination prefixes, as real traffic is.
AREA_CODES = (201, 202, 203, 205, 206, 207, 208, 209, 210, 212, 213, 214, 215, 216, 217,
              218, 219, 224, 225, 228, 229, 231, 234, 239, 240, 248, 251, 252, 253, 254)

RANDOM_VERIFY_LUA = """
local threads = 0
setup = function(thread)
  threads = threads + 1
  thread:set("thread_no", threads)
end
local areas = {AREA_CODES}
init = function(args)
  math.randomseed(os.time() * 1000 + (thread_no or 0))
end
request = function()
  local to = string.format("+1%d555%04d", areas[math.random(#areas)], math.random(0, 9999))
  return wrk.format(nil, nil, nil, '{"channel": "sms", "to": "' .. to .. '"}')
end
""".replace("AREA_CODES", ", ".join(str(a) for a in AREA_CODES))


def _numbers(count: int, rng: random.Random) -> list[str]:
    seen: set[str] = set()
    while len(seen) < count:
        seen.add(f"+1{rng.choice(AREA_CODES)}555{rng.randint(0, 9999):04d}")
    return list(seen)


def _org(ctx: BenchContext):
    from platform_core.tenancy.models import Organization

    return Organization.objects.get(pk=ctx.values["sandbox_org_id"])


def _clean_verify(ctx: BenchContext) -> None:
    from messaging.verify.models import Verification
    from platform_core.tenancy.context import tenant_context

    org = _org(ctx)
    with tenant_context(org):
        Verification.objects.for_organization(org).delete()
    _clean(ctx)


def _prepare(ctx: BenchContext) -> None:
    from messaging.verify.models import VerifySettings

    prepare_send(ctx)
    VerifySettings.objects.update_or_create(
        organization_id=ctx.values["sandbox_org_id"],
        defaults={"fraud_guard_enabled": False, "bulk_requests_per_minute": 1000})
    _clean_verify(ctx)


def _settle_then_clean(ctx: BenchContext) -> None:
    """Let the requests in flight finish (no new row for 0.5 s, 10 s at most), then clean."""
    from messaging.verify.models import Verification

    rows = Verification.objects.for_organization(_org(ctx))
    deadline, last = time.monotonic() + 10, -1
    while time.monotonic() < deadline:
        count = rows.count()
        if count == last:
            break
        last = count
        time.sleep(0.5)
    _clean_verify(ctx)


def _expect_send(ctx: BenchContext, answer) -> str | None:
    body = answer.get("data", {}) if isinstance(answer, dict) else {}
    # A send answers `pending`; the message's status events move it to `sent`.
    if body.get("status") != "pending" or not str(body.get("verification_id", "")).startswith(
            "ver_") or "test_code" not in body:
        return f"the verification was not accepted: {str(answer)[:300]}"
    return None


class VerifyBulk(Scenario):
    name = "verify_bulk_1000"
    needs_server = True
    title = (f"One POST /api/v1/verify/bulk of {BULK_SIZE:,} recipients, then delivered by "
             "one solo worker per queue family; req/s = recipients/s of the request")

    def __init__(self):
        import os

        self.rounds = max(1, int(os.environ.get("BENCH_VERIFY_BULK_ROUNDS", "3")))

    def prepare(self, ctx: BenchContext) -> None:
        _prepare(ctx)

    def check(self, ctx: BenchContext) -> None:
        status, answer = self._post(ctx, _numbers(2, random.Random()))
        if status != 201:
            raise AssertionError(f"expected 201, got {status}: {str(answer)[:300]}")
        _clean_verify(ctx)

    def warm_up(self, ctx: BenchContext, *, seconds: int) -> None:
        """The first round's numbers are reported separately; no extra warm-up."""

    @staticmethod
    def _post(ctx: BenchContext, recipients: list[str]):
        return http_post_json(ctx.base_url + BULK_PATH,
                              {"X-API-Key": ctx.values["sandbox_key"]},
                              {"recipients": recipients, "channel": "sms"}, timeout=120)

    def measure(self, ctx: BenchContext, *, seconds: int) -> Measurement:
        rng = random.Random()
        request_seconds, delivered_seconds, errors = [], [], 0
        try:
            with ExitStack() as stack:
                _clean_verify(ctx)
                stack.callback(_clean_verify, ctx)
                # The sends run on their own queue (config/queues.py): a worker on the
                # default queue alone would never send them.
                workers = stack.enter_context(family_workers())
                for _ in range(self.rounds):
                    took, done_after, failed = self._round(ctx, workers, rng)
                    request_seconds.append(took)
                    delivered_seconds.append(done_after)
                    errors += failed
                    _clean_verify(ctx)
        except (ServerError, AssertionError) as exc:
            raise RuntimeError(str(exc)) from exc
        median = statistics.median(request_seconds)
        delivered = statistics.median(delivered_seconds)
        return Measurement(
            scenario=self.name, title=self.title,
            requests_per_second=BULK_SIZE / median, p50_ms=median * 1000,
            requests=self.rounds, errors=errors,
            figures={"bulk_seconds": median, "delivered_seconds": delivered},
            notes=(f"request {', '.join(f'{s:.2f}s' for s in request_seconds)} (201, "
                   f"{BULK_SIZE:,} sent each); all {BULK_SIZE:,} delivered "
                   f"{', '.join(f'{s:.1f}s' for s in delivered_seconds)} after the request "
                   f"started (one solo worker per queue family)"),
        )

    def _round(self, ctx: BenchContext, workers: FamilyWorkers,
               rng: random.Random) -> tuple[float, float, int]:
        from messaging.models import Message

        started = time.perf_counter()
        status, answer = self._post(ctx, _numbers(BULK_SIZE, rng))
        took = time.perf_counter() - started
        sent = answer.get("data", {}).get("sent") if isinstance(answer, dict) else None
        if status != 201 or sent != BULK_SIZE:
            raise AssertionError(f"bulk answered {status}, sent {sent}: {str(answer)[:300]}")
        delivered = Message.objects.for_organization(_org(ctx)).filter(status="delivered")
        wait_until(lambda: delivered.count() >= BULK_SIZE, timeout=300,
                   what=f"the worker to deliver {BULK_SIZE} codes", watch=list(workers.workers.values()),
                   interval=0.2)
        return took, time.perf_counter() - started, 0


VERIFY_SCENARIOS: list[Scenario] = [
    PostScenario(
        name="verify_send",
        title="Verification sends (POST /api/v1/verify/send, sms, sandbox org, no worker)",
        path=SEND_PATH,
        body=lambda ctx: {"channel": "sms", "to": "+12125550100"},
        key_fn=lambda ctx: ctx.values["sandbox_key"],
        expect_status=201,
        expect=_expect_send,
        prepare_fn=_prepare,
        extra_lua=lambda ctx: RANDOM_VERIFY_LUA,
        after_fn=_settle_then_clean,
    ),
    VerifyBulk(),
]
