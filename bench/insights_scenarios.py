"""The insights scenarios of `make bench` (issue 22, "Done means"): LLM-spend reads over a
year of usage.

One million `AIUsage` rows (BENCH_INSIGHTS_USAGE_ROWS) spread evenly over the last 365
days in the bench organization (20 agents, 4 models, 3 channels, conversations of 10 model
calls, one call in 7 an embedding outside any conversation) are seeded once with one
INSERT ... SELECT, then the quarter-hour rollup is rebuilt (insights/rollup.py), as the
beat job keeps it in production.

- `insights_spend_summary`: GET /api/v1/insights/llm-spend/summary over the whole year,
  grouped by agent (each group's distinct conversations included).
- `insights_spend_timeseries`: GET /api/v1/insights/llm-spend/timeseries over the year,
  daily buckets in the organization's zone.

Each request goes through the harness's gunicorn, one at a time (BENCH_INSIGHTS_RUNS,
default 200, after 10 warm-up requests): p50, p95 and p99 of the full request. Target:
p95 under 200 ms.
"""

from __future__ import annotations

import time
from datetime import timedelta
from urllib.parse import urlencode

from .base import BenchContext, Measurement, Scenario
from .env import scaled
from .event_scenarios import percentile
from .scenarios import http_get_json

AGENTS = 20
ID_PREFIX = "aiu_bench"


def _org(ctx: BenchContext):
    from platform_core.tenancy.models import Organization

    return Organization.objects.get(pk=ctx.seed.org_id)


def ensure_usage(org, rows: int) -> int:
    """Seed `rows` usage rows over the last year once (by count), and rebuild the rollup."""
    from django.db import connection
    from django.utils import timezone

    from agents.agent_models import Agent
    from agents.usage.models import AIUsage
    from insights import rollup
    from insights.models import UsageDay, UsageRollup

    agents = list(Agent.objects.for_organization(org).filter(name__startswith="Bench agent ")
                  .order_by("name").values_list("pk", flat=True))
    if len(agents) < AGENTS:
        Agent.objects.for_organization(org).filter(name__startswith="Bench agent ").delete()
        agents = [Agent.objects.create(organization=org, name=f"Bench agent {n:02d}",
                                       model="gpt-4o-mini").pk for n in range(AGENTS)]
    seeded = AIUsage.objects.for_organization(org).filter(id__startswith=ID_PREFIX)
    if seeded.count() != rows:
        seeded._raw_delete(seeded.db)
        start = timezone.now() - timedelta(days=365)
        step = 365 * 86400 / rows
        with connection.cursor() as cursor:
            cursor.execute(
                f"INSERT INTO {AIUsage._meta.db_table} (id, organization_id, agent_id, "
                "conversation_id, channel, feature, engine, model, prompt_tokens, "
                "completion_tokens, total_tokens, cost_cents, created_at) "
                "SELECT %s || lpad(i::text, 8, '0'), %s, (%s::text[])[1 + (i / 10) %% 20], "
                "CASE WHEN i %% 7 = 0 THEN '' ELSE 'cnv_bench' || lpad((i / 10)::text, 7, "
                "'0') END, (ARRAY['sms', 'whatsapp', 'voice'])[1 + (i / 10) %% 3], "
                "CASE WHEN i %% 7 = 0 THEN 'embeddings' ELSE 'chat.completions' END, "
                "'local', (ARRAY['gpt-4o-mini', 'gpt-4o', 'gpt-4.1-mini', 'local'])"
                "[1 + (i / 10) %% 4], 300 + i %% 500, 50 + i %% 200, "
                "350 + i %% 500 + i %% 200, 1 + i %% 9, "
                "%s + make_interval(secs => i * %s) FROM generate_series(0, %s - 1) AS i",
                [ID_PREFIX, org.pk, agents, start, step, rows])
        rollup.rebuild()
    else:
        rollup.refresh()
    # Planner statistics of the fresh tables (autovacuum's job in production).
    with connection.cursor() as cursor:
        for model in (AIUsage, UsageRollup, UsageDay):
            cursor.execute(f"ANALYZE {model._meta.db_table}")
    return seeded.count()


class SpendRead(Scenario):
    needs_server = True

    def __init__(self, name: str, path: str, params: dict[str, str], what: str):
        self.name, self.path, self.params, self.what = name, path, params, what
        self.rows = scaled("BENCH_INSIGHTS_USAGE_ROWS", 1_000_000, minimum=1000)
        self.runs = scaled("BENCH_INSIGHTS_RUNS", 200, minimum=10)
        self.title = f"Insights {what} over a year of usage"

    def url(self, ctx: BenchContext) -> str:
        from django.utils import timezone

        now = timezone.now()
        window = {"from": (now - timedelta(days=365)).isoformat().replace("+00:00", "Z"),
                  "to": now.isoformat().replace("+00:00", "Z")}
        return f"{ctx.base_url}/api/v1/insights/{self.path}?" + urlencode(
            {**window, **self.params})

    def prepare(self, ctx: BenchContext) -> None:
        from platform_core.tenancy.context import tenant_context

        if "insights_usage_rows" not in ctx.values:
            org = _org(ctx)
            with tenant_context(org):
                ctx.values["insights_usage_rows"] = ensure_usage(org, self.rows)
        self.title = (f"Insights {self.what} over {ctx.values['insights_usage_rows']:,} usage "
                      "rows (365 days), sequential")

    def check(self, ctx: BenchContext) -> None:
        status, body = http_get_json(self.url(ctx), ctx.auth_headers)
        if status != 200:
            raise AssertionError(f"expected 200, got {status}: {str(body)[:300]}")
        data = body["data"]
        total = (data["totals"]["call_count"] if "groups" in data
                 else len(data["series"]))
        if "groups" in data and total < ctx.values["insights_usage_rows"] * 0.99:
            raise AssertionError(f"the summary counts {total} calls")
        if "series" in data and not 365 <= total <= 366:
            raise AssertionError(f"{total} daily buckets")

    def warm_up(self, ctx: BenchContext, *, seconds: int) -> None:
        """The measurement does its own warm-up requests."""

    def measure(self, ctx: BenchContext, *, seconds: int) -> Measurement:
        url, headers = self.url(ctx), ctx.auth_headers
        for _ in range(10):
            http_get_json(url, headers)
        times, errors = [], 0
        started = time.monotonic()
        for _ in range(self.runs):
            t0 = time.perf_counter()
            status, _ = http_get_json(url, headers)
            times.append((time.perf_counter() - t0) * 1000)
            errors += status != 200
        elapsed = time.monotonic() - started
        p95 = percentile(times, 95)
        return Measurement(
            scenario=self.name, title=self.title, requests_per_second=self.runs / elapsed,
            p50_ms=percentile(times, 50), p99_ms=percentile(times, 99), requests=self.runs,
            errors=errors, figures={"p95_ms": p95 or 0.0},
            notes=f"p95 {p95:.2f} ms (target < 200 ms)")


INSIGHTS_SCENARIOS: list[Scenario] = [
    SpendRead("insights_spend_summary", "llm-spend/summary", {"groupBy": "agent"},
              "LLM-spend summary by agent"),
    SpendRead("insights_spend_timeseries", "llm-spend/timeseries", {"granularity": "day"},
              "LLM-spend daily time series"),
]
