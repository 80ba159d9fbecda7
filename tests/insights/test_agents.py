"""Agent ROI (with its config and series), containment, comparison and benchmarks."""

from __future__ import annotations

import pytest

from tests.insights.conftest import at, conversation, data, get, make_agent, track, usage

WINDOW = {"from": "2026-03-01T00:00:00Z", "to": "2026-03-11T00:00:00Z"}
CONFIG = "/api/v1/insights/agent-roi/config"


@pytest.fixture
def world(tenant):
    org, client = tenant.org, tenant.client()
    a, b = make_agent(org, "Alpha", "gpt-4o"), make_agent(org, "Beta", "gpt-4o-mini")
    c = make_agent(org, "Gamma")
    usage(org, at("2026-03-02T10:00:00Z"), cost=100, agent_id=a.pk)
    usage(org, at("2026-03-03T10:00:00Z"), cost=50, agent_id=a.pk)
    usage(org, at("2026-03-02T11:00:00Z"), cost=30, agent_id=b.pk)
    usage(org, at("2026-03-04T10:00:00Z"), cost=20, agent_id="agt_gone")
    usage(org, at("2026-03-20T10:00:00Z"), cost=999, agent_id=a.pk)  # outside
    c1 = conversation(org, at("2026-03-02T09:00:00Z"), agent_id=a.pk)
    c2 = conversation(org, at("2026-03-02T09:30:00Z"), agent_id=a.pk, status="closed")
    conversation(org, at("2026-03-03T09:00:00Z"), agent_id=a.pk, handoff="pending")
    conversation(org, at("2026-03-03T09:30:00Z"), agent_id=a.pk, status="closed",
                 escalated=True)
    conversation(org, at("2026-03-04T09:00:00Z"), agent_id=b.pk, status="closed")
    conversation(org, at("2026-03-25T09:00:00Z"), agent_id=a.pk)  # outside
    conversation(org, at("2026-03-04T09:00:00Z"))  # not AI-led
    data(client.put(CONFIG, {"default_outcome_value_cents": 40,
                             "per_rubric_value_cents": {"booked": 700}}, format="json"))
    track(org, at("2026-03-02T12:00:00Z"), conversation_id=c1.pk, value_cents=1000)
    track(org, at("2026-03-02T12:00:00Z"), agent_id=b.pk, value_cents=200)
    track(org, at("2026-03-03T12:00:00Z"), "outcome", conversation_id=c2.pk, rubric_id="booked")
    track(org, at("2026-03-03T12:00:00Z"), "outcome", agent_id=a.pk, rubric_id="other")
    track(org, at("2026-03-04T12:00:00Z"), agent_id=a.pk, value_cents=5000, currency="EUR")
    track(org, at("2026-03-04T12:00:00Z"), agent_id=a.pk, value_cents=300, currency="usd")
    track(org, at("2026-03-04T12:00:00Z"), "page_view", agent_id=a.pk, value_cents=999)
    track(org, at("2026-03-04T12:00:00Z"), value_cents=50)  # unattributed
    track(org, at("2026-03-05T12:00:00Z"), agent_id=a.pk, value_cents=-5)  # -> default
    track(org, at("2026-03-05T12:00:00Z"), agent_id=a.pk, value_cents="12")  # -> default
    track(org, at("2026-03-21T12:00:00Z"), agent_id=a.pk, value_cents=10)  # outside
    return tenant, a, b, c


def test_roi_per_agent_and_totals(world):
    tenant, a, b, _ = world
    body = data(get(tenant.client(), "agent-roi", **WINDOW))
    revenue_a = 1000 + 700 + 40 + 300 + 40 + 40
    assert body["agents"] == [
        {"agent_id": a.pk, "agent_name": "Alpha", "model": "gpt-4o", "conversation_count": 4,
         "cost_cents": 150, "attributed_revenue_cents": revenue_a, "conversion_count": 6,
         "margin_cents": revenue_a - 150, "margin_percent": 92.9},
        {"agent_id": b.pk, "agent_name": "Beta", "model": "gpt-4o-mini",
         "conversation_count": 1, "cost_cents": 30, "attributed_revenue_cents": 200,
         "conversion_count": 1, "margin_cents": 170, "margin_percent": 85.0},
        {"agent_id": "agt_gone", "agent_name": None, "model": "gpt-4o-mini",
         "conversation_count": 0, "cost_cents": 20, "attributed_revenue_cents": 0,
         "conversion_count": 0, "margin_cents": -20, "margin_percent": None}]
    assert body["totals"] == {"cost_cents": 200, "attributed_revenue_cents": revenue_a + 200,
                              "margin_cents": revenue_a, "margin_percent": 91.4,
                              "conversion_count": 7, "agent_count": 3, "truncated": False}
    limited = data(get(tenant.client(), "agent-roi", limit="2", **WINDOW))
    assert [r["agent_id"] for r in limited["agents"]] == [a.pk, b.pk]
    assert limited["totals"]["truncated"] is True
    assert limited["totals"]["cost_cents"] == 200  # totals cover every agent


def test_roi_margin_percent_null_at_zero_revenue(tenant):
    agent = make_agent(tenant.org)
    usage(tenant.org, at("2026-03-02T10:00:00Z"), cost=5, agent_id=agent.pk)
    body = data(get(tenant.client(), "agent-roi", **WINDOW))
    assert body["agents"][0]["margin_percent"] is None
    assert body["totals"]["margin_percent"] is None
    assert body["totals"]["margin_cents"] == -5


def test_roi_timeseries(world):
    tenant, a, _, _ = world
    body = data(get(tenant.client(), "agent-roi/timeseries", agentId=a.pk, **WINDOW))
    assert len(body["series"]) == 10
    by_day = {p["bucket"][:10]: p for p in body["series"]}
    assert (by_day["2026-03-02"]["cost_cents"],
            by_day["2026-03-02"]["attributed_revenue_cents"]) == (100, 1000)
    assert (by_day["2026-03-03"]["cost_cents"],
            by_day["2026-03-03"]["attributed_revenue_cents"]) == (50, 740)
    assert by_day["2026-03-04"]["attributed_revenue_cents"] == 300
    assert by_day["2026-03-05"]["attributed_revenue_cents"] == 80
    assert by_day["2026-03-06"] == {"bucket": "2026-03-06T00:00:00+00:00", "cost_cents": 0,
                                    "attributed_revenue_cents": 0, "conversion_count": 0,
                                    "margin_cents": 0, "margin_percent": None}
    assert body["totals"]["attributed_revenue_cents"] == 2120
    everyone = data(get(tenant.client(), "agent-roi/timeseries", **WINDOW))
    assert everyone["totals"]["cost_cents"] == 200
    assert everyone["totals"]["attributed_revenue_cents"] == 2320


def test_unknown_agent_is_404(world):
    tenant, _, _, c = world
    client = tenant.client()
    for path in ("agent-roi/timeseries", "containment/timeseries", "agent-benchmarks"):
        response = get(client, path, agentId="agt_nope")
        assert response.status_code == 404
        assert response.json()["error"]["code"] == "NOT_FOUND"
        assert get(client, path, agentId="agt_gone").status_code == 200  # history remains
        assert get(client, path, agentId=c.pk).status_code == 200  # an agent, no traffic


def test_roi_config_read_merge_write(tenant):
    client = tenant.client()
    assert data(client.get(CONFIG))["default_outcome_value_cents"] is None
    data(client.put(CONFIG, {"per_rubric_value_cents": {"a": 1, "b": 2}}, format="json"))
    body = data(client.put(CONFIG, {"default_outcome_value_cents": 9,
                                    "per_rubric_value_cents": {"a": None, "c": 3}},
                           format="json"))
    assert body["per_rubric_value_cents"] == {"b": 2, "c": 3}
    assert body["default_outcome_value_cents"] == 9
    body = data(client.put(CONFIG, {"default_outcome_value_cents": None}, format="json"))
    assert (body["default_outcome_value_cents"], body["per_rubric_value_cents"]) == (
        None, {"b": 2, "c": 3})
    for bad, field in (({"default_outcome_value_cents": -1}, "default_outcome_value_cents"),
                       ({"default_outcome_value_cents": 100_000_000_001},
                        "default_outcome_value_cents"),
                       ({"per_rubric_value_cents": []}, "per_rubric_value_cents"),
                       ({"per_rubric_value_cents": {"x": "1"}}, "per_rubric_value_cents.x"),
                       ({"extra": 1}, "extra")):
        response = client.put(CONFIG, bad, format="json")
        assert response.status_code == 422, bad
        assert response.json()["error"]["details"]["issues"][0]["field"] == field
    many = {f"r{i}": i for i in range(498)}
    assert data(client.put(CONFIG, {"per_rubric_value_cents": many}, format="json"))
    too_many = client.put(CONFIG, {"per_rubric_value_cents": {"y1": 1, "y2": 2}},
                          format="json")
    assert too_many.status_code == 422
    assert len(data(client.get(CONFIG))["per_rubric_value_cents"]) == 500


def test_containment(world):
    tenant, a, b, _ = world
    body = data(get(tenant.client(), "containment", **WINDOW))
    assert body["agents"] == [
        {"agent_id": a.pk, "agent_name": "Alpha", "conversation_count": 4,
         "contained_count": 2, "resolved_count": 1, "escalated_count": 2,
         "containment_rate": 50.0, "resolution_rate": 25.0, "escalation_rate": 50.0},
        {"agent_id": b.pk, "agent_name": "Beta", "conversation_count": 1,
         "contained_count": 1, "resolved_count": 1, "escalated_count": 0,
         "containment_rate": 100.0, "resolution_rate": 100.0, "escalation_rate": 0.0}]
    assert body["totals"] == {"conversation_count": 5, "contained_count": 3,
                              "resolved_count": 2, "escalated_count": 2,
                              "containment_rate": 60.0, "resolution_rate": 40.0,
                              "escalation_rate": 40.0, "agent_count": 2, "truncated": False}
    assert data(get(tenant.client(), "containment", limit="1", **WINDOW))["totals"][
        "truncated"] is True


def test_containment_timeseries_and_nulls(world):
    tenant, a, _, _ = world
    body = data(get(tenant.client(), "containment/timeseries", agentId=a.pk, **WINDOW))
    by_day = {p["bucket"][:10]: p for p in body["series"]}
    assert (by_day["2026-03-02"]["containment_rate"], by_day["2026-03-02"]["resolution_rate"],
            by_day["2026-03-02"]["escalation_rate"]) == (100.0, 50.0, 0.0)
    assert (by_day["2026-03-03"]["containment_rate"],
            by_day["2026-03-03"]["escalation_rate"]) == (0.0, 100.0)
    assert by_day["2026-03-06"]["containment_rate"] is None  # no conversation: null
    assert body["totals"]["conversation_count"] == 4
    empty = data(get(tenant.client(), "containment", **{"from": "2025-01-01T00:00:00Z",
                                                         "to": "2025-01-02T00:00:00Z"}))
    assert empty["totals"]["containment_rate"] is None
    assert empty["agents"] == []


def test_comparison(world):
    tenant, a, b, c = world
    client = tenant.client()
    short = get(client, "agent-comparison", agentIds=a.pk)
    assert short.status_code == 422
    assert short.json()["error"]["details"]["issues"][0]["field"] == "agentIds"
    body = data(get(client, "agent-comparison", agentIds=f"{a.pk},{b.pk},{c.pk},agt_nope",
                    **WINDOW))
    assert [r["agent_id"] for r in body["rows"]] == [a.pk, b.pk, c.pk]
    assert set(body["rows"][0]) == {
        "agent_id", "agent_name", "model", "conversation_count", "cost_cents",
        "attributed_revenue_cents", "margin_cents", "margin_percent", "containment_rate",
        "resolution_rate", "escalation_rate"}
    assert body["rows"][2] == {
        "agent_id": c.pk, "agent_name": "Gamma", "model": "gpt-4o-mini",
        "conversation_count": 0, "cost_cents": 0, "attributed_revenue_cents": 0,
        "margin_cents": 0, "margin_percent": None, "containment_rate": None,
        "resolution_rate": None, "escalation_rate": None}
    average = body["org_average"]
    assert average["cost_cents"] == 66.67  # (150 + 30 + 20) / 3 agents with traffic
    assert average["containment_rate"] == 75.0  # (50 + 100) / 2; agt_gone has none
    assert average["margin_percent"] == 89.0  # (92.9 + 85.0) / 2
    assert {m["key"]: (m["unit"], m["higherIsBetter"]) for m in body["metrics"]}[
        "escalation_rate"] == ("percent", False)
    assert {"key", "label", "unit", "higherIsBetter"} == set(body["metrics"][0])
    assert (body["population_size"], body["ranked_population_size"],
            body["population_truncated"]) == (3, 3, False)
    repeated = tenant.client().get(
        f"/api/v1/insights/agent-comparison?agentIds={a.pk}&agentIds={b.pk}")
    assert len(data(repeated)["rows"]) == 2


def test_benchmarks(world):
    tenant, a, b, _ = world
    body = data(get(tenant.client(), "agent-benchmarks", **WINDOW))
    standing = {row["agent_id"]: row["metrics"] for row in body["agents"]}
    assert standing["agt_gone"]["cost_cents"] == {"value": 20, "percentile": 100.0, "rank": 1,
                                                  "band": "top"}
    assert standing[b.pk]["cost_cents"] == {"value": 30, "percentile": 50.0, "rank": 2,
                                            "band": "above_average"}
    assert standing[a.pk]["cost_cents"] == {"value": 150, "percentile": 0.0, "rank": 3,
                                            "band": "bottom"}
    assert standing[a.pk]["containment_rate"]["rank"] == 2
    assert standing[b.pk]["containment_rate"]["band"] == "top"
    assert standing["agt_gone"]["containment_rate"] == {"value": None, "percentile": None,
                                                        "rank": None, "band": None}
    assert standing[a.pk]["attributed_revenue_cents"]["rank"] == 1
    assert body["population_size"] == 3
    one = data(get(tenant.client(), "agent-benchmarks", agentId=b.pk, **WINDOW))
    assert [r["agent_id"] for r in one["agents"]] == [b.pk]
    assert one["agents"][0]["metrics"]["cost_cents"]["rank"] == 2
