# ruff: noqa: S608 - table names come from the models; every value is a bound parameter
"""Agent figures (Document 3, 4.4): ROI, containment, comparison and benchmarks.

- Cost: the agent's usage (`AIUsage.agent_id`) in the window. `conversation_count`: its
  AI-led conversations created in the window, or the conversations whose first usage row
  in the window names it, whichever is larger.
- Attributed revenue: tracked events (`POST /events/track`) named in
  `INSIGHTS_CONVERSION_EVENTS` (default `conversion`, `outcome`) that occurred in the
  window and name the agent, by `properties.agent_id` or through
  `properties.conversation_id` (the AI conversation's agent). Each is worth
  `properties.value_cents` (a non-negative integer of the wallet currency) when given,
  else the configured `per_rubric_value_cents[properties.rubric_id]`, else
  `default_outcome_value_cents`, else nothing. An event whose `properties.currency`
  differs from the wallet currency is not counted (money is never converted).
- Margin = revenue - cost; `margin_percent` = margin / revenue, null at zero revenue.
- Containment over the AI-led conversations (`ai_agent_id` set, not merged away) created
  in the window: contained = never handed off nor escalated; resolved = contained and
  closed (or archived); escalated = handed off or escalated. Rates are percentages with
  one decimal, null with no conversation.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings

from conversations.models import Conversation
from platform_core.events.models import TrackedEvent

from .. import sql
from ..models import InsightsSettings
from ..window import Window, bucket_keys, bucket_label
from .common import agents_by_id, margin, percent

DEFAULT_CONVERSION_EVENTS = ("conversion", "outcome")
POPULATION_LIMIT = 200


def conversion_events() -> tuple[str, ...]:
    return tuple(getattr(settings, "INSIGHTS_CONVERSION_EVENTS", DEFAULT_CONVERSION_EVENTS))


def roi_config(organization) -> dict[str, Any]:
    row = InsightsSettings.objects.for_organization(organization).first()
    return {
        "default_outcome_value_cents": row.default_outcome_value_cents if row else None,
        "per_rubric_value_cents": dict(row.per_rubric_value_cents or {}) if row else {},
        "conversion_events": list(conversion_events()),
        "currency": organization.currency,
        "updated_at": row.updated_at if row else None,
    }


# --- the three sources ------------------------------------------------------------------


def _cost_rows(organization, window: Window, bucket: bool, agent_id: str | None):
    source, params = sql.usage_source(organization, window.start, window.end,
                                      days=not bucket or window.granularity == "day")
    where, extra = "s.agent_id <> ''", []
    if agent_id:
        where, extra = "s.agent_id = %s", [agent_id]
    if bucket:
        expr, bparams = sql.bucket_sql("s.bucket", window.granularity, window.tz)
        return sql.fetch(f"SELECT {expr} AS b, SUM(s.cost_cents), SUM(s.calls) "
                         f"FROM ({source}) s WHERE {where} GROUP BY b",
                         [*bparams, *params, *extra])
    return sql.fetch(f"SELECT s.agent_id, SUM(s.cost_cents), SUM(s.calls), "
                     f"SUM(s.conversations_started), MIN(s.model), "
                     f"MAX(s.model) FROM ({source}) s WHERE {where} GROUP BY s.agent_id",
                     [*params, *extra])


def _revenue_rows(organization, window: Window, bucket: bool, agent_id: str | None):
    config = roi_config(organization)
    events, conversations = TrackedEvent._meta.db_table, Conversation._meta.db_table
    props = "e.properties"
    agent = (f"COALESCE(NULLIF({sql.json_text(props, 'agent_id')}, ''), "
             f"NULLIF(c.ai_agent_id, ''))")
    rubrics = config["per_rubric_value_cents"]
    params: list[Any] = []
    rubric_join, rubric_value = "", "NULL"
    if rubrics:
        union = " UNION ALL ".join(
            "SELECT CAST(%s AS text) AS rubric_id, CAST(%s AS bigint) AS cents"
            for _ in rubrics)
        rubric_join = (f"LEFT JOIN ({union}) r ON r.rubric_id = "
                       f"{sql.json_text(props, 'rubric_id')}")
        for key, cents in sorted(rubrics.items()):
            params += [key, cents]
        rubric_value = "r.cents"
    value = (f"COALESCE({sql.json_cents(props, 'value_cents')}, {rubric_value}, "
             f"CAST(%s AS bigint), 0)")
    names = list(conversion_events())
    group = agent
    head: list[Any] = []
    if bucket:
        group, head = sql.bucket_sql("e.occurred_at", window.granularity, window.tz)
    inner = (
        f"SELECT {group} AS g, {agent} AS agent, {value} AS value FROM {events} e "
        f"LEFT JOIN {conversations} c ON c.organization_id = e.organization_id "
        f"AND c.id = {sql.json_text(props, 'conversation_id')} {rubric_join} "
        f"WHERE e.organization_id = %s AND e.name IN ({', '.join('%s' for _ in names)}) "
        f"AND e.occurred_at >= %s AND e.occurred_at < %s "
        f"AND (COALESCE({sql.json_text(props, 'currency')}, '') = '' "
        f"OR UPPER({sql.json_text(props, 'currency')}) = %s)")
    all_params = [*head, config["default_outcome_value_cents"], *params, organization.pk,
                  *names, sql.db_time(window.start), sql.db_time(window.end),
                  organization.currency.upper()]
    where, extra = "x.agent IS NOT NULL", []
    if agent_id:
        where, extra = "x.agent = %s", [agent_id]
    return sql.fetch(f"SELECT x.g, SUM(x.value), COUNT(*) FROM ({inner}) x WHERE {where} "
                     f"GROUP BY x.g", [*all_params, *extra])


def _containment_rows(organization, window: Window, bucket: bool, agent_id: str | None):
    table = Conversation._meta.db_table
    group, head = "c.ai_agent_id", []
    if bucket:
        group, head = sql.bucket_sql("c.created_at", window.granularity, window.tz)
    escalated = "(c.handoff_status <> 'none' OR c.escalated_at IS NOT NULL)"
    where, extra = "c.ai_agent_id <> ''", []
    if agent_id:
        where, extra = "c.ai_agent_id = %s", [agent_id]
    return sql.fetch(
        f"SELECT {group} AS g, COUNT(*), "
        f"SUM(CASE WHEN {escalated} THEN 0 ELSE 1 END), "
        f"SUM(CASE WHEN NOT {escalated} AND c.status IN ('closed', 'archived') "
        f"THEN 1 ELSE 0 END), "
        f"SUM(CASE WHEN {escalated} THEN 1 ELSE 0 END) "
        f"FROM {table} c WHERE c.organization_id = %s AND {where} "
        f"AND c.merged_into_id IS NULL AND c.created_at >= %s AND c.created_at < %s "
        f"GROUP BY g",
        [*head, organization.pk, *extra, sql.db_time(window.start), sql.db_time(window.end)])


def _rates(total: int, contained: int, resolved: int, escalated: int) -> dict[str, Any]:
    return {"conversation_count": total, "contained_count": contained,
            "resolved_count": resolved, "escalated_count": escalated,
            "containment_rate": percent(contained, total),
            "resolution_rate": percent(resolved, total),
            "escalation_rate": percent(escalated, total)}


# --- per agent --------------------------------------------------------------------------


def agent_table(organization, window: Window) -> dict[str, dict[str, Any]]:
    """Every agent with traffic in the window (usage, conversations or attributed
    revenue): its cost, revenue, margin and rates. Three aggregations, merged by agent."""
    table: dict[str, dict[str, Any]] = {}

    def entry(agent: str) -> dict[str, Any]:
        return table.setdefault(agent, {"cost_cents": 0, "calls": 0, "usage_conversations": 0,
                                        "models": (None, None), "revenue_cents": 0,
                                        "conversions": 0, "conv": (0, 0, 0, 0)})

    for agent, cost, calls, conversations, low, high in _cost_rows(organization, window,
                                                                    False, None):
        row = entry(agent)
        row.update(cost_cents=int(cost or 0), calls=int(calls or 0),
                   usage_conversations=int(conversations or 0), models=(low, high))
    for agent, value, count in _revenue_rows(organization, window, False, None):
        row = entry(agent)
        row.update(revenue_cents=int(value or 0), conversions=int(count or 0))
    for agent, total, contained, resolved, escalated in _containment_rows(
            organization, window, False, None):
        entry(agent)["conv"] = (int(total), int(contained or 0), int(resolved or 0),
                                int(escalated or 0))
    names = agents_by_id(organization, set(table))
    result = {}
    for agent, row in table.items():
        known = names.get(agent) or {}
        low, high = row["models"]
        margin_cents, margin_pct = margin(row["revenue_cents"], row["cost_cents"])
        total, contained, resolved, escalated = row["conv"]
        result[agent] = {
            "agent_id": agent, "agent_name": known.get("name"),
            "model": known.get("model") or (low if low == high else None),
            "conversation_count": max(total, row["usage_conversations"]),
            "cost_cents": row["cost_cents"], "attributed_revenue_cents": row["revenue_cents"],
            "conversion_count": row["conversions"], "margin_cents": margin_cents,
            "margin_percent": margin_pct, **_rates(total, contained, resolved, escalated),
            "ai_conversation_count": total,
        }
    return result


def _ordered(rows: list[dict[str, Any]], key: str) -> list[dict[str, Any]]:
    return sorted(rows, key=lambda r: (-(r[key] or 0), r["agent_id"]))


def roi(organization, window: Window, *, limit: int) -> dict[str, Any]:
    table = agent_table(organization, window)
    rows = list(table.values())
    ordered = _ordered(rows, "cost_cents")
    cost = sum(r["cost_cents"] for r in rows)
    revenue = sum(r["attributed_revenue_cents"] for r in rows)
    margin_cents, margin_pct = margin(revenue, cost)
    fields = ("agent_id", "agent_name", "model", "conversation_count", "cost_cents",
              "attributed_revenue_cents", "conversion_count", "margin_cents", "margin_percent")
    return {
        **window.as_dict(), "currency": organization.currency,
        "agents": [{k: r[k] for k in fields} for r in ordered[:limit]],
        "totals": {"cost_cents": cost, "attributed_revenue_cents": revenue,
                   "margin_cents": margin_cents, "margin_percent": margin_pct,
                   "conversion_count": sum(r["conversion_count"] for r in rows),
                   "agent_count": len(rows), "truncated": len(rows) > limit},
    }


def roi_timeseries(organization, window: Window, *, agent_id: str | None) -> dict[str, Any]:
    cost = {sql.bucket_key(b, window.granularity): int(c or 0)
            for b, c, _ in _cost_rows(organization, window, True, agent_id)}
    revenue = {sql.bucket_key(b, window.granularity): (int(v or 0), int(n or 0))
               for b, v, n in _revenue_rows(organization, window, True, agent_id)}
    series = []
    for key in bucket_keys(window):
        spent, (earned, conversions) = cost.get(key, 0), revenue.get(key, (0, 0))
        margin_cents, margin_pct = margin(earned, spent)
        series.append({"bucket": bucket_label(key, window.tz), "cost_cents": spent,
                       "attributed_revenue_cents": earned, "conversion_count": conversions,
                       "margin_cents": margin_cents, "margin_percent": margin_pct})
    total_cost = sum(p["cost_cents"] for p in series)
    total_revenue = sum(p["attributed_revenue_cents"] for p in series)
    margin_cents, margin_pct = margin(total_revenue, total_cost)
    return {**window.as_dict(), "currency": organization.currency, "agent_id": agent_id,
            "granularity": window.granularity,
            "totals": {"cost_cents": total_cost, "attributed_revenue_cents": total_revenue,
                       "margin_cents": margin_cents, "margin_percent": margin_pct},
            "series": series}


def containment(organization, window: Window, *, limit: int) -> dict[str, Any]:
    rows = _containment_rows(organization, window, False, None)
    names = agents_by_id(organization, {r[0] for r in rows})
    agents = [{"agent_id": agent, "agent_name": (names.get(agent) or {}).get("name"),
               **_rates(int(t), int(c or 0), int(r or 0), int(e or 0))}
              for agent, t, c, r, e in rows]
    agents.sort(key=lambda a: (-a["conversation_count"], a["agent_id"]))
    totals = [sum(int(row[i] or 0) for row in rows) for i in range(1, 5)]
    return {**window.as_dict(), "agents": agents[:limit],
            "totals": {**_rates(*totals), "agent_count": len(agents),
                       "truncated": len(agents) > limit}}


def containment_timeseries(organization, window: Window, *, agent_id: str | None
                           ) -> dict[str, Any]:
    found = {sql.bucket_key(b, window.granularity): (int(t), int(c or 0), int(r or 0),
                                                     int(e or 0))
             for b, t, c, r, e in _containment_rows(organization, window, True, agent_id)}
    series = [{"bucket": bucket_label(key, window.tz), **_rates(*found.get(key, (0, 0, 0, 0)))}
              for key in bucket_keys(window)]
    totals = [sum(v[i] for v in found.values()) for i in range(4)]
    return {**window.as_dict(), "agent_id": agent_id, "granularity": window.granularity,
            "totals": _rates(*totals), "series": series}


def agent_known(organization, agent_id: str) -> bool:
    """An agent of the organization, or one its usage or conversations still name."""
    from agents.agent_models import Agent
    from agents.usage.models import AIUsage

    return (Agent.objects.for_organization(organization).filter(pk=agent_id).exists()
            or AIUsage.objects.for_organization(organization).filter(agent_id=agent_id).exists()
            or Conversation.objects.for_organization(organization).filter(
                ai_agent_id=agent_id).exists())
