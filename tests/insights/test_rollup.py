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
