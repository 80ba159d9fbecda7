"""Agent comparison and benchmarks against the organization's population of agents.

The population is every agent with traffic in the window (see `agents.agent_table`);
the ranked population is its `POPULATION_LIMIT` busiest agents (by conversations, then
cost), over which averages, percentiles and ranks are computed; `population_truncated`
says when agents were left out. Percentile, rank and band per metric (benchmarks):

- rank: 1 + the number of ranked agents strictly better on the metric (ties share it);
- percentile: 100 x (agents ranked below) / (agents with a value - 1), one decimal;
  100.0 when the agent is alone;
- band: `top` (percentile >= 75), `above_average` (>= 50), `below_average` (>= 25),
  `bottom`. A metric the agent has no value for (a rate without conversations, a
  margin percent without revenue) has null value, percentile, rank and band.
"""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from ..window import Window
from .agents import POPULATION_LIMIT, agent_table

METRICS: list[dict[str, Any]] = [
    {"key": "conversation_count", "label": "Conversations", "unit": "count",
     "higherIsBetter": True},
    {"key": "cost_cents", "label": "Model cost", "unit": "cents", "higherIsBetter": False},
    {"key": "attributed_revenue_cents", "label": "Attributed revenue", "unit": "cents",
     "higherIsBetter": True},
    {"key": "margin_cents", "label": "Margin", "unit": "cents", "higherIsBetter": True},
    {"key": "margin_percent", "label": "Margin percent", "unit": "percent",
     "higherIsBetter": True},
    {"key": "containment_rate", "label": "Containment rate", "unit": "percent",
     "higherIsBetter": True},
    {"key": "resolution_rate", "label": "Resolution rate", "unit": "percent",
     "higherIsBetter": True},
    {"key": "escalation_rate", "label": "Escalation rate", "unit": "percent",
     "higherIsBetter": False},
]
ROW_FIELDS = ("agent_id", "agent_name", "model", "conversation_count", "cost_cents",
              "attributed_revenue_cents", "margin_cents", "margin_percent",
              "containment_rate", "resolution_rate", "escalation_rate")


def _population(organization, window: Window) -> tuple[dict[str, dict], list[dict]]:
    table = agent_table(organization, window)
    ranked = sorted(table.values(), key=lambda r: (-r["conversation_count"], -r["cost_cents"],
                                                   r["agent_id"]))[:POPULATION_LIMIT]
    return table, ranked


def _mean(values: list[Any], unit: str) -> float | int | None:
    present = [v for v in values if v is not None]
    if not present:
        return None
    mean = Decimal(sum(Decimal(str(v)) for v in present)) / len(present)
    if unit == "percent":
        return float(mean.quantize(Decimal("0.1"), rounding=ROUND_HALF_UP))
    return float(mean.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))


def _population_fields(table: dict, ranked: list) -> dict[str, Any]:
    return {"population_size": len(table), "ranked_population_size": len(ranked),
            "population_truncated": len(table) > len(ranked)}


def comparison(organization, window: Window, *, agent_ids: list[str]) -> dict[str, Any]:
    from .common import agents_by_id

    table, ranked = _population(organization, window)
    known = agents_by_id(organization, set(agent_ids))
    rows = []
    for agent_id in agent_ids:
        if agent_id in table:
            rows.append({k: table[agent_id][k] for k in ROW_FIELDS})
        elif agent_id in known:  # an agent of the organization with no traffic
            rows.append({"agent_id": agent_id, "agent_name": known[agent_id]["name"],
                         "model": known[agent_id]["model"], "conversation_count": 0,
                         "cost_cents": 0, "attributed_revenue_cents": 0, "margin_cents": 0,
                         "margin_percent": None, "containment_rate": None,
                         "resolution_rate": None, "escalation_rate": None})
    average = {m["key"]: _mean([r[m["key"]] for r in ranked], m["unit"]) for m in METRICS}
    return {**window.as_dict(), "currency": organization.currency, "rows": rows,
            "org_average": average, "metrics": METRICS, **_population_fields(table, ranked)}


def _standing(value: Any, values: list[Any], higher_is_better: bool) -> dict[str, Any]:
    if value is None:
        return {"value": None, "percentile": None, "rank": None, "band": None}
    present = [v for v in values if v is not None]
    better = sum(1 for v in present if (v > value if higher_is_better else v < value))
    worse = sum(1 for v in present if (v < value if higher_is_better else v > value))
    percentile = 100.0 if len(present) <= 1 else float(
        (Decimal(worse) * 100 / (len(present) - 1)).quantize(Decimal("0.1"),
                                                             rounding=ROUND_HALF_UP))
    band = ("top" if percentile >= 75 else "above_average" if percentile >= 50
            else "below_average" if percentile >= 25 else "bottom")
    return {"value": value, "percentile": percentile, "rank": better + 1, "band": band}


def benchmarks(organization, window: Window, *, agent_id: str | None, limit: int
               ) -> dict[str, Any]:
    table, ranked = _population(organization, window)
    columns = {m["key"]: [r[m["key"]] for r in ranked] for m in METRICS}
    chosen = ranked if agent_id is None else [table[agent_id]] if agent_id in table else []
    agents = []
    for row in chosen[:limit]:
        agents.append({"agent_id": row["agent_id"], "agent_name": row["agent_name"],
                       "ranked": row in ranked,
                       "metrics": {m["key"]: _standing(row[m["key"]], columns[m["key"]],
                                                       m["higherIsBetter"])
                                   for m in METRICS}})
    return {**window.as_dict(), "currency": organization.currency, "agents": agents,
            "metrics": METRICS,
            "org_average": {m["key"]: _mean(columns[m["key"]], m["unit"]) for m in METRICS},
            "truncated": agent_id is None and len(chosen) > limit,
            **_population_fields(table, ranked)}
