# ruff: noqa: S608 - table names come from the models; every value is a bound parameter
"""LLM spend (Document 3, 4.4 `/llm-spend/*`): overview, summary, time series, top
conversations and spend by channel. Costs are the usage rows' `cost_cents` (integer cents
of the wallet currency, never converted). `conversation_count` counts each conversation
once, in the window and group of its first usage row ever (so it adds up across days and
groups; with `groupBy=conversation` it is 1 for a conversation that started in the
window, else 0)."""

from __future__ import annotations

import calendar
from datetime import UTC, datetime, timedelta
from typing import Any

from django.utils import timezone

from conversations.models import Conversation

from .. import sql
from ..window import Window, bucket_keys, bucket_label, iso, local_midnight, org_zone
from .budget import budget_of
from .common import agents_by_id, percent, round_half_up

GROUP_COLUMNS = {"agent": "agent_id", "model": "model", "conversation": "conversation_id"}
UNATTRIBUTED = "unattributed"


def _source(organization, start: datetime, end: datetime, *, days: bool = True
            ) -> tuple[str, list[Any]]:
    return sql.usage_source(organization, start, end, days=days)


def summary(organization, window: Window, *, group_by: str, limit: int) -> dict[str, Any]:
    source, params = _source(organization, window.start, window.end,
                             days=group_by != "conversation")
    column = GROUP_COLUMNS[group_by]
    # One statement: the groups, and the totals over every group as window sums.
    rows = sql.fetch(
        f"SELECT s.{column}, SUM(s.total_tokens), SUM(s.cost_cents), "
        f"SUM(s.conversations_started), MIN(s.model), MAX(s.model), SUM(s.calls), "
        f"COUNT(*) OVER (), SUM(SUM(s.total_tokens)) OVER (), SUM(SUM(s.cost_cents)) OVER (), "
        f"SUM(SUM(s.conversations_started)) OVER (), SUM(SUM(s.calls)) OVER () "
        f"FROM ({source}) s GROUP BY s.{column} "
        f"ORDER BY SUM(s.cost_cents) DESC, s.{column} ASC LIMIT %s", [*params, limit])
    totals_row = [int(v or 0) for v in rows[0][8:12]] if rows else [0, 0, 0, 0]
    names = agents_by_id(organization, {r[0] for r in rows}) if group_by == "agent" else {}
    groups = []
    for key, tokens, cost, conversations, low_model, high_model, calls, *_ in rows:
        label: str | None = key or UNATTRIBUTED
        if group_by == "agent" and key:
            label = (names.get(key) or {}).get("name")
        groups.append({
            "group_id": key or None,
            "group_label": label,
            "model": low_model if low_model == high_model else None,
            "total_tokens": int(tokens or 0),
            "total_cost_cents": int(cost or 0),
            "conversation_count": int(conversations or 0),
            "call_count": int(calls or 0),
        })
    group_count = int(rows[0][7]) if rows else 0
    return {
        **window.as_dict(), "currency": organization.currency, "group_by": group_by,
        "totals": {"total_tokens": int(totals_row[0]), "total_cost_cents": int(totals_row[1]),
                   "conversation_count": int(totals_row[2]), "call_count": int(totals_row[3]),
                   "group_count": group_count, "truncated": group_count > len(groups)},
        "groups": groups,
    }


def timeseries(organization, window: Window) -> dict[str, Any]:
    source, params = _source(organization, window.start, window.end,
                             days=window.granularity == "day")
    bucket, bucket_params = sql.bucket_sql("s.bucket", window.granularity, window.tz)
    rows = sql.fetch(
        f"SELECT {bucket} AS b, SUM(s.total_tokens), SUM(s.cost_cents) FROM ({source}) s "
        f"GROUP BY b", [*bucket_params, *params])
    found = {sql.bucket_key(b, window.granularity): (int(t or 0), int(c or 0))
             for b, t, c in rows}
    series = [{"bucket": bucket_label(key, window.tz), "total_tokens": found.get(key, (0, 0))[0],
               "total_cost_cents": found.get(key, (0, 0))[1]} for key in bucket_keys(window)]
    return {**window.as_dict(), "currency": organization.currency,
            "granularity": window.granularity,
            "totals": {"total_tokens": sum(p["total_tokens"] for p in series),
                       "total_cost_cents": sum(p["total_cost_cents"] for p in series)},
            "series": series}


def top_conversations(organization, window: Window, *, limit: int) -> dict[str, Any]:
    source, params = _source(organization, window.start, window.end, days=False)
    conversations = Conversation._meta.db_table
    rows = sql.fetch(
        f"SELECT t.conversation_id, t.agent_id, t.low_model, t.high_model, t.tokens, t.cost, "
        f"COALESCE(c.created_at, t.first_at) FROM ("
        f"SELECT s.conversation_id, MAX(s.agent_id) AS agent_id, MIN(s.model) AS low_model, "
        f"MAX(s.model) AS high_model, SUM(s.total_tokens) AS tokens, SUM(s.cost_cents) AS cost, "
        f"MIN(s.first_at) AS first_at FROM ({source}) s WHERE s.conversation_id <> '' "
        f"GROUP BY s.conversation_id ORDER BY SUM(s.cost_cents) DESC, s.conversation_id "
        f"LIMIT %s) t LEFT JOIN {conversations} c ON c.id = t.conversation_id "
        f"AND c.organization_id = %s ORDER BY t.cost DESC, t.conversation_id",
        [*params, limit, organization.pk])
    names = agents_by_id(organization, {r[1] for r in rows})
    items = [{
        "conversation_id": conversation_id,
        "agent_id": agent_id or None,
        "agent_name": (names.get(agent_id) or {}).get("name"),
        "model": low if low == high else None,
        "total_tokens": int(tokens or 0),
        "total_cost_cents": int(cost or 0),
        "started_at": iso(sql.as_datetime(started), window.tz) if started else None,
    } for conversation_id, agent_id, low, high, tokens, cost, started in rows]
    return {**window.as_dict(), "currency": organization.currency, "conversations": items}


def by_feature(organization, window: Window) -> dict[str, Any]:
    source, params = _source(organization, window.start, window.end)
    rows = sql.fetch(
        f"SELECT s.channel, SUM(s.cost_cents), SUM(s.total_tokens), SUM(s.calls) "
        f"FROM ({source}) s GROUP BY s.channel ORDER BY SUM(s.cost_cents) DESC, s.channel",
        params)
    merged: dict[str, list[int]] = {}
    for channel, cost, tokens, calls in rows:
        entry = merged.setdefault(channel or "unknown", [0, 0, 0])
        entry[0] += int(cost or 0)
        entry[1] += int(tokens or 0)
        entry[2] += int(calls or 0)
    features = sorted(({"channel": k, "total_cost_cents": v[0], "total_tokens": v[1],
                        "event_count": v[2]} for k, v in merged.items()),
                      key=lambda f: (-f["total_cost_cents"], f["channel"]))
    budget = budget_of(organization)
    breaches = []
    for channel, threshold in sorted(budget["channel_thresholds"].items()):
        cents = merged.get(channel, [0])[0]
        if threshold and cents >= threshold:
            breaches.append({"channel": channel, "cents": cents, "threshold_cents": threshold,
                             "percent": percent(cents, threshold)})
    return {**window.as_dict(), "currency": organization.currency,
            "total_cents": sum(f["total_cost_cents"] for f in features),
            "budget": budget, "features": features, "threshold_breaches": breaches}


def overview(organization, now: datetime | None = None) -> dict[str, Any]:
    """Today, month to date and the last 7 days in the organization's zone."""
    now = now or timezone.now()
    tz = org_zone(organization)
    local_today = now.astimezone(tz).date()
    today = local_midnight(local_today, tz)
    month_start = local_midnight(local_today.replace(day=1), tz)
    last7 = local_midnight(local_today - timedelta(days=6), tz)
    prev_first = (local_today.replace(day=1) - timedelta(days=1)).replace(day=1)
    prev_start = local_midnight(prev_first, tz)
    # The same span of last month, to the quarter-hour, never past its end.
    prev_end = min(sql.floor_quarter(prev_start + (now - month_start)), month_start)
    start = min(prev_start, last7)
    # Quarter-hours, not days: last month's span ends inside a day.
    source, params = _source(organization, start, now, days=False)
    rows = sql.fetch(
        "SELECT "
        "COALESCE(SUM(CASE WHEN s.bucket >= %s THEN s.cost_cents END), 0), "
        "COALESCE(SUM(CASE WHEN s.bucket >= %s THEN s.cost_cents END), 0), "
        "COALESCE(SUM(CASE WHEN s.bucket >= %s THEN s.calls END), 0), "
        "COALESCE(SUM(CASE WHEN s.bucket >= %s AND s.bucket < %s THEN s.cost_cents END), 0), "
        "COALESCE(SUM(CASE WHEN s.bucket >= %s AND s.bucket < %s THEN s.calls END), 0), "
        "COALESCE(SUM(CASE WHEN s.bucket >= %s THEN s.cost_cents END), 0) "
        f"FROM ({source}) s",
        [sql.db_time(today), sql.db_time(month_start), sql.db_time(month_start),
         sql.db_time(prev_start), sql.db_time(prev_end), sql.db_time(prev_start),
         sql.db_time(prev_end), sql.db_time(last7), *params])
    today_cents, mtd_cents, mtd_calls, prev_cents, prev_calls, last7_cents = (
        int(v) for v in rows[0])
    budget = budget_of(organization)
    daily_cap = budget["daily_cap_cents"]
    days_in_month = calendar.monthrange(local_today.year, local_today.month)[1]
    projected = (round_half_up(mtd_cents * days_in_month / local_today.day)
                 if mtd_calls else None)
    vs_last = percent(mtd_cents - prev_cents, prev_cents) if prev_calls and prev_cents else None
    return {
        "currency": organization.currency,
        "timezone": tz.key,
        "as_of": iso(now.astimezone(UTC), tz),
        "daily_cap_cents": daily_cap,
        "monthly_cap_cents": budget["monthly_cap_cents"],
        "today": {"spend_cents": today_cents,
                  "cap_percentage": percent(today_cents, daily_cap) if daily_cap else None},
        "month_to_date": {
            "spend_cents": mtd_cents,
            "projected_month_end_cents": projected,
            "vs_last_period_percent": vs_last,
            "days_remaining_in_month": days_in_month - local_today.day,
            "cap_percentage": (percent(mtd_cents, budget["monthly_cap_cents"])
                               if budget["monthly_cap_cents"] else None),
        },
        "last_7d_spend_cents": last7_cents,
    }
