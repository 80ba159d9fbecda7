"""Reads go to the `replica` alias when one is configured; PUTs to the primary.

The test settings give a second alias on the same test database (TEST MIRROR); this test
turns the router on with DATABASE_REPLICA_ALIAS and checks which connection each request
used. Transactional, so the mirror connection sees the committed rows."""

from __future__ import annotations

import pytest
from django.db import connections
from django.test.utils import CaptureQueriesContext

from agents.usage.models import AIBudget
from insights.db import ReplicaRouter, read_alias, replica_reads
from tests.conftest import make_tenant
from tests.insights.conftest import at, data, get, usage


def test_router_is_inert_without_a_replica():
    with replica_reads():
        assert ReplicaRouter().db_for_read(AIBudget) is None
        assert read_alias() == "default"


@pytest.mark.django_db(transaction=True, databases=["default", "replica"])
def test_reads_go_to_the_replica_and_puts_to_the_primary(settings):
    settings.DATABASE_REPLICA_ALIAS = "replica"
    tenant = make_tenant()
    usage(tenant.org, at("2026-03-02T10:00:00Z"), cost=12, agent_id="agt_r")
    client = tenant.client()
    with replica_reads():
        assert ReplicaRouter().db_for_read(AIBudget) == "replica"
        assert read_alias() == "replica"
    assert ReplicaRouter().db_for_read(AIBudget) is None  # outside insights reads
    assert ReplicaRouter().allow_migrate("replica", "insights") is False
    with CaptureQueriesContext(connections["replica"]) as on_replica, \
            CaptureQueriesContext(connections["default"]) as on_primary:
        body = data(get(client, "llm-spend/summary", **{"from": "2026-03-01T00:00:00Z",
                                                          "to": "2026-03-03T00:00:00Z"}))
    assert body["totals"]["total_cost_cents"] == 12
    assert any("agents_aiusage" in q["sql"] for q in on_replica.captured_queries)
    assert not any("agents_aiusage" in q["sql"] for q in on_primary.captured_queries)
    with CaptureQueriesContext(connections["replica"]) as on_replica, \
            CaptureQueriesContext(connections["default"]) as on_primary:
        data(client.put("/api/v1/insights/llm-spend/budget", {"daily_cap_cents": 9},
                        format="json"))
    assert on_replica.captured_queries == []
    assert any("agents_aibudget" in q["sql"] for q in on_primary.captured_queries)
    assert AIBudget.objects.for_organization(tenant.org).get().daily_cap_cents == 9
