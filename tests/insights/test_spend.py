"""LLM spend: summary, time series, top conversations and by-feature, with figures the
tests compute from the rows they seed (zoneinfo for the buckets, across DST changes), with
and without the rollup."""

from __future__ import annotations

from collections import defaultdict
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
import time_machine

from insights import rollup
from tests.insights.conftest import (
    NOW,
    at,
    conversation,
    data,
    get,
    make_agent,
    usage,
)

NY = ZoneInfo("America/New_York")
START = datetime(2026, 3, 5, 20, 0, tzinfo=UTC)


@pytest.fixture
def seeded(org_tz):
    """~300 usage rows every 37 minutes across the spring-forward of 2026-03-08."""
    org = org_tz.org
    first, second = make_agent(org, "First", "gpt-4o"), make_agent(org, "Second", "gpt-4o-mini")
    agents = [first.pk, second.pk, ""]
    rows = []
    for i in range(300):
        row = {"when": START + timedelta(minutes=37 * i), "cost": i % 7 + 1,
               "tokens": 10 * i + 3, "agent_id": agents[i % 3],
               "model": ("gpt-4o", "gpt-4o-mini")[(i // 3) % 2],
               "conversation_id": f"cnv_{i // 13:03d}" if i % 5 else "",
               "channel": ("sms", "whatsapp", "")[(i // 2) % 3]}
        usage(org, row["when"], cost=row["cost"], tokens=row["tokens"],
              agent_id=row["agent_id"], model=row["model"],
              conversation_id=row["conversation_id"], channel=row["channel"])
        rows.append(row)
    return org_tz, rows, {first.pk: "First", second.pk: "Second"}


WINDOW = {"from": "2026-03-06T00:07:00-05:00", "to": "2026-03-09T23:52:00-04:00"}


def _inside(rows, window=WINDOW):
    low, high = (datetime.fromisoformat(window[k]) for k in ("from", "to"))
    return [r for r in rows if low <= r["when"] < high]


def _started(rows, inside):
    """{conversation: its first row} for conversations whose first row is in `inside`."""
    firsts = {}
    for r in sorted(rows, key=lambda r: r["when"]):
        if r["conversation_id"]:
            firsts.setdefault(r["conversation_id"], r)
    ids = {id(r) for r in inside}
    return {cid: r for cid, r in firsts.items() if id(r) in ids}


def _both_ways(client, path, **params):
    """The answer before the rollup ran and after (they must agree)."""
    with time_machine.travel(NOW, tick=False):
        before = data(get(client, path, **params))
        assert rollup.refresh() is not None
        after = data(get(client, path, **params))
    assert before == after
    return after


@pytest.mark.parametrize("group_by", ["agent", "model", "conversation"])
def test_summary_groups(seeded, group_by):
    tenant, rows, names = seeded
    inside = _inside(rows)
    body = _both_ways(tenant.client(), "llm-spend/summary", groupBy=group_by, **WINDOW)
    field = {"agent": "agent_id", "model": "model", "conversation": "conversation_id"}[group_by]
    expected = defaultdict(lambda: {"cost": 0, "tokens": 0, "conversations": set(),
                                    "models": set()})
    for r in inside:
        entry = expected[r[field]]
        entry["cost"] += r["cost"]
        entry["tokens"] += r["tokens"]
        entry["models"].add(r["model"])
    # A conversation counts once, where its first usage row is (in the window).
    started = _started(rows, inside)
    for cid, first in started.items():
        expected[first[field]]["conversations"].add(cid)
    order = sorted(expected, key=lambda k: (-expected[k]["cost"], k))
    assert [g["group_id"] for g in body["groups"]] == [k or None for k in order]
    for group in body["groups"]:
        entry = expected[group["group_id"] or ""]
        assert group["total_cost_cents"] == entry["cost"]
        assert group["total_tokens"] == entry["tokens"]
        assert group["conversation_count"] == len(entry["conversations"])
        assert group["model"] == (next(iter(entry["models"])) if len(entry["models"]) == 1
                                  else None)
        if group_by == "agent":
            assert group["group_label"] == names.get(group["group_id"], "unattributed")
    assert body["totals"] == {
        "total_cost_cents": sum(r["cost"] for r in inside),
        "total_tokens": sum(r["tokens"] for r in inside),
        "conversation_count": len(started),
        "call_count": len(inside), "group_count": len(expected), "truncated": False}
    assert body["currency"] == "USD"


def test_summary_limit_truncates(seeded):
    tenant, rows, _ = seeded
    body = data(get(tenant.client(), "llm-spend/summary", groupBy="conversation", limit="2",
                    **WINDOW))
    assert len(body["groups"]) == 2
    assert body["totals"]["truncated"] is True
    assert body["totals"]["group_count"] == len({r["conversation_id"] for r in _inside(rows)})


def _daily(rows, zone):
    sums = defaultdict(lambda: [0, 0])
    for r in rows:
        day = r["when"].astimezone(zone).date()
        sums[day][0] += r["tokens"]
        sums[day][1] += r["cost"]
    return sums


def test_daily_series_across_spring_forward(seeded):
    tenant, rows, _ = seeded
    body = _both_ways(tenant.client(), "llm-spend/timeseries", **WINDOW)
    expected = _daily(_inside(rows), NY)
    assert [p["bucket"] for p in body["series"]] == [
        "2026-03-06T00:00:00-05:00", "2026-03-07T00:00:00-05:00",
        "2026-03-08T00:00:00-05:00", "2026-03-09T00:00:00-04:00"]
    for point in body["series"]:
        day = datetime.fromisoformat(point["bucket"]).date()
        assert [point["total_tokens"], point["total_cost_cents"]] == expected[day]
    assert body["totals"]["total_cost_cents"] == sum(r["cost"] for r in _inside(rows))


def test_hourly_series_keeps_both_hours_of_the_fall_back(org_tz):
    org = org_tz.org
    usage(org, at("2026-11-01T05:30:00+00:00"), cost=3)  # 01:30 EDT
    usage(org, at("2026-11-01T06:30:00+00:00"), cost=5)  # 01:30 EST
    usage(org, at("2026-11-01T06:59:59+00:00"), cost=7)
    window = {"from": "2026-11-01T00:00:00-04:00", "to": "2026-11-01T04:00:00-05:00"}
    with time_machine.travel(datetime(2026, 11, 2, tzinfo=UTC), tick=False):
        rollup.refresh()
        body = data(get(org_tz.client(), "llm-spend/timeseries", granularity="hour", **window))
    assert [(p["bucket"], p["total_cost_cents"]) for p in body["series"]] == [
        ("2026-11-01T00:00:00-04:00", 0), ("2026-11-01T01:00:00-04:00", 3),
        ("2026-11-01T01:00:00-05:00", 12), ("2026-11-01T02:00:00-05:00", 0),
        ("2026-11-01T03:00:00-05:00", 0)]


def test_half_hour_zone_days(tenant):
    tenant.org.timezone = "Asia/Kolkata"  # +05:30: local midnight is 18:30 UTC
    tenant.org.save(update_fields=["timezone"])
    usage(tenant.org, at("2026-03-01T18:29:59+00:00"), cost=2)
    usage(tenant.org, at("2026-03-01T18:30:00+00:00"), cost=9)
    with time_machine.travel(NOW, tick=False):
        rollup.refresh()
        body = data(get(tenant.client(), "llm-spend/timeseries", **{
            "from": "2026-03-01T00:00:00+05:30", "to": "2026-03-03T00:00:00+05:30"}))
    assert [(p["bucket"], p["total_cost_cents"]) for p in body["series"]] == [
        ("2026-03-01T00:00:00+05:30", 2), ("2026-03-02T00:00:00+05:30", 9)]


def test_empty_window_is_zero_not_null(tenant):
    client = tenant.client()
    window = {"from": "2026-01-01T00:00:00Z", "to": "2026-01-03T00:00:00Z"}
    series = data(get(client, "llm-spend/timeseries", **window))
    assert [p["total_cost_cents"] for p in series["series"]] == [0, 0]
    summary = data(get(client, "llm-spend/summary", **window))
    assert summary["groups"] == []
    assert summary["totals"]["total_cost_cents"] == 0
    assert data(get(client, "llm-spend/top-conversations", **window))["conversations"] == []
    feature = data(get(client, "llm-spend/by-feature", **window))
    assert (feature["total_cents"], feature["features"], feature["threshold_breaches"]) == (
        0, [], [])


def test_top_conversations(seeded):
    tenant, rows, names = seeded
    org = tenant.org
    real = conversation(org, at("2026-03-06T10:00:00+00:00"))
    usage(org, at("2026-03-07T10:00:00+00:00"), cost=10_000, conversation_id=real.pk,
          agent_id=next(iter(names)), model="gpt-4o")
    body = _both_ways(tenant.client(), "llm-spend/top-conversations", limit="3", **WINDOW)
    top = body["conversations"][0]
    assert top == {"conversation_id": real.pk, "agent_id": next(iter(names)),
                   "agent_name": names[next(iter(names))], "model": "gpt-4o",
                   "total_tokens": 100, "total_cost_cents": 10_000,
                   "started_at": "2026-03-06T05:00:00-05:00"}
    costs = defaultdict(int)
    for r in _inside(rows):
        if r["conversation_id"]:
            costs[r["conversation_id"]] += r["cost"]
    order = sorted(costs, key=lambda k: (-costs[k], k))[:2]
    assert [c["conversation_id"] for c in body["conversations"][1:]] == order
    assert [c["total_cost_cents"] for c in body["conversations"][1:]] == [costs[k] for k in order]


def test_by_feature_and_threshold_breaches(seeded):
    tenant, rows, _ = seeded
    client = tenant.client()
    inside = _inside(rows)
    sums = defaultdict(lambda: [0, 0, 0])
    for r in inside:
        entry = sums[r["channel"] or "unknown"]
        entry[0] += r["cost"]
        entry[1] += r["tokens"]
        entry[2] += 1
    sms = sums["sms"][0]
    assert data(client.put("/api/v1/insights/llm-spend/budget", {
        "channel_thresholds": {"sms": sms, "whatsapp": sums["whatsapp"][0] + 1, "voice": 1}},
        format="json"))
    body = _both_ways(client, "llm-spend/by-feature", **WINDOW)
    assert {f["channel"]: [f["total_cost_cents"], f["total_tokens"], f["event_count"]]
            for f in body["features"]} == dict(sums)
    assert body["total_cents"] == sum(r["cost"] for r in inside)
    assert body["threshold_breaches"] == [
        {"channel": "sms", "cents": sms, "threshold_cents": sms, "percent": 100.0}]
    assert body["budget"]["channel_thresholds"]["voice"] == 1


def test_summary_query_count(seeded, django_assert_max_num_queries):
    tenant, _, _ = seeded
    client = tenant.client()
    client.get("/api/v1/insights/llm-spend/summary")  # warm the credential caches
    with django_assert_max_num_queries(12):
        data(get(client, "llm-spend/summary", **WINDOW))
