"""The quarter-hour rollup: what it holds is read from it, what is newer from the usage
rows, and a late row is picked up by the next run."""

from __future__ import annotations

from datetime import timedelta

import time_machine

from agents.usage.models import AIUsage
from insights import rollup
from insights.models import UsageRollup
from platform_core.tenancy.context import tenant_context
from tests.insights.conftest import NOW, at, data, get, usage

WINDOW = {"from": "2026-03-20T00:00:00Z", "to": "2026-03-20T16:00:00Z"}


def total(client) -> int:
    return data(get(client, "llm-spend/summary", **WINDOW))["totals"]["total_cost_cents"]


def test_rolled_up_quarters_come_from_the_rollup(tenant):
    org, client = tenant.org, tenant.client()
    usage(org, at("2026-03-20T10:01:00Z"), cost=5, agent_id="agt_a")
    usage(org, at("2026-03-20T10:14:00Z"), cost=6, agent_id="agt_a")
    with time_machine.travel(NOW, tick=False):
        assert rollup.refresh() == at("2026-03-20T15:00:00Z")  # 15:07 minus the settle time
        row = UsageRollup.objects.for_organization(org).get()
        assert (row.bucket, row.cost_cents, row.calls) == (at("2026-03-20T10:00:00Z"), 11, 2)
        with tenant_context(org):
            AIUsage.objects.all().delete()
        assert total(client) == 11  # served by the rollup alone
        usage(org, at("2026-03-20T15:03:00Z"), cost=7)  # past the watermark: raw rows
        assert total(client) == 18


def test_a_late_row_is_rolled_up_by_the_next_run(tenant):
    org, client = tenant.org, tenant.client()
    with time_machine.travel(NOW, tick=False):
        usage(org, at("2026-03-20T10:00:00Z"), cost=1)
        rollup.refresh()
        usage(org, at("2026-03-20T14:50:00Z"), cost=2)  # committed after its quarter rolled
        assert total(client) == 1  # inside the rolled range: not seen yet
    with time_machine.travel(NOW + timedelta(minutes=1), tick=False):
        rollup.refresh()
        assert total(client) == 3


def test_rebuild_after_a_backfill(tenant):
    org, client = tenant.org, tenant.client()
    with time_machine.travel(NOW, tick=False):
        rollup.refresh()
        usage(org, at("2026-03-20T01:00:00Z"), cost=4)  # imported with a past timestamp
        rollup.rebuild()
        assert UsageRollup.objects.for_organization(org).count() == 1
        assert total(client) == 4


def test_whole_days_come_from_the_day_rollup(tenant):
    from insights.models import UsageDay

    org, client = tenant.org, tenant.client()
    usage(org, at("2026-03-10T10:00:00Z"), cost=5, conversation_id="cnv_a")
    usage(org, at("2026-03-11T23:30:00Z"), cost=7, conversation_id="cnv_a")
    window = {"from": "2026-03-10T00:00:00Z", "to": "2026-03-12T00:00:00Z"}
    with time_machine.travel(NOW, tick=False):
        rollup.refresh()
        days = UsageDay.objects.for_organization(org).order_by("day")
        assert [(d.day.isoformat(), d.cost_cents, d.conversations_started) for d in days] == [
            ("2026-03-10", 5, 1), ("2026-03-11", 7, 0)]
        with tenant_context(org):
            AIUsage.objects.all().delete()
            UsageRollup.objects.all().delete()
        body = data(get(client, "llm-spend/summary", **window))
        assert (body["totals"]["total_cost_cents"], body["totals"]["conversation_count"]) == (
            12, 1)
        series = data(get(client, "llm-spend/timeseries", **window))["series"]
        assert [p["total_cost_cents"] for p in series] == [5, 7]


def test_a_zone_change_never_reads_days_of_the_old_zone(tenant):
    from insights.models import DayRollupState

    org, client = tenant.org, tenant.client()
    usage(org, at("2026-03-11T03:30:00Z"), cost=7)  # 03-10 23:30 in New York
    window = {"from": "2026-03-10T00:00:00-05:00", "to": "2026-03-12T00:00:00-04:00"}
    with time_machine.travel(NOW, tick=False):
        rollup.refresh()
        org.timezone = "America/New_York"
        org.save(update_fields=["timezone"])
        series = data(get(client, "llm-spend/timeseries", **window))["series"]
        assert [p["total_cost_cents"] for p in series] == [7, 0]  # before the rebuild
        rollup.refresh()
        assert DayRollupState.objects.for_organization(org).get().tz == "America/New_York"
        series = data(get(client, "llm-spend/timeseries", **window))["series"]
        assert [p["total_cost_cents"] for p in series] == [7, 0]


def test_a_zone_the_database_does_not_know_never_stops_the_job(tenant, other_tenant):
    from insights.models import DayRollupState

    tenant.org.timezone = "Mars/Olympus_Mons"  # stored behind the API's back
    tenant.org.save(update_fields=["timezone"])
    usage(tenant.org, at("2026-03-10T10:00:00Z"), cost=5)
    usage(other_tenant.org, at("2026-03-10T10:00:00Z"), cost=6)
    with time_machine.travel(NOW, tick=False):
        rollup.refresh()
        assert not DayRollupState.objects.for_organization(tenant.org).exists()
        assert DayRollupState.objects.for_organization(other_tenant.org).get().tz == "UTC"
        body = data(get(tenant.client(), "llm-spend/summary", **{
            "from": "2026-03-09T00:00:00Z", "to": "2026-03-12T00:00:00Z"}))
    assert body["totals"]["total_cost_cents"] == 5  # from the quarter-hours, UTC buckets
