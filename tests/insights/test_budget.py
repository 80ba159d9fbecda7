"""The spend overview and the budget: read-merge-write, dropped values, alerts once per
period."""

from __future__ import annotations

from datetime import timedelta

import time_machine

from insights import tasks
from platform_core.events.models import Event
from tests.insights.conftest import NOW, at, data, get, usage

BUDGET = "/api/v1/insights/llm-spend/budget"


def put(client, body):
    return client.put(BUDGET, body, format="json")


def test_overview_nulls_without_cap_or_history(org_tz):
    with time_machine.travel(NOW, tick=False):
        body = data(get(org_tz.client(), "llm-spend/overview"))
    assert body == {
        "currency": "USD", "timezone": "America/New_York", "as_of": "2026-03-20T11:07:00-04:00",
        "daily_cap_cents": None, "monthly_cap_cents": None,
        "today": {"spend_cents": 0, "cap_percentage": None},
        "month_to_date": {"spend_cents": 0, "projected_month_end_cents": None,
                          "vs_last_period_percent": None, "days_remaining_in_month": 11,
                          "cap_percentage": None},
        "last_7d_spend_cents": 0}


def test_overview_figures_in_the_org_zone(org_tz):
    org = org_tz.org
    # Now is 2026-03-20 11:07 EDT. Local midnights: today 04:00Z, 03-14 04:00Z (EDT),
    # 03-01 05:00Z (EST), 02-01 05:00Z; last month's same span ends 02-20 15:00Z.
    for when, cents in [("2026-03-20T04:30:00Z", 10), ("2026-03-20T03:59:00Z", 20),
                        ("2026-03-14T04:00:00Z", 40), ("2026-03-14T03:59:00Z", 80),
                        ("2026-03-01T05:00:00Z", 160), ("2026-03-01T04:59:00Z", 320),
                        ("2026-02-20T14:59:00Z", 640), ("2026-02-20T15:00:00Z", 1280),
                        ("2026-02-01T04:59:00Z", 2560)]:
        usage(org, at(when), cost=cents)
    with time_machine.travel(NOW, tick=False):
        assert data(put(org_tz.client(), {"daily_cap_cents": 50}))["daily_cap_cents"] == 50
        body = data(get(org_tz.client(), "llm-spend/overview"))
    mtd = 10 + 20 + 40 + 80 + 160
    assert body["today"] == {"spend_cents": 10, "cap_percentage": 20.0}
    assert body["last_7d_spend_cents"] == 10 + 20 + 40
    assert body["month_to_date"] == {
        "spend_cents": mtd, "projected_month_end_cents": 481,  # 310 * 31 / 20 = 480.5
        "vs_last_period_percent": -51.6,  # (310 - 640) / 640
        "days_remaining_in_month": 11, "cap_percentage": None}
    assert body["daily_cap_cents"] == 50


def test_budget_read_merge_write(tenant):
    client = tenant.client()
    assert data(client.get(BUDGET)) == {
        "monthly_cap_cents": None, "daily_cap_cents": None, "channel_thresholds": {},
        "alert_at_percent": 80, "currency": "USD", "updated_at": None}
    first = data(put(client, {"monthly_cap_cents": 100_000_000_000,
                              "channel_thresholds": {"sms": 500, "whatsapp": 700}}))
    assert first["dropped"] == []
    second = data(put(client, {"daily_cap_cents": 2500, "alert_at_percent": 90,
                               "channel_thresholds": {"sms": None, "voice": 300}}))
    assert (second["monthly_cap_cents"], second["daily_cap_cents"],
            second["alert_at_percent"]) == (100_000_000_000, 2500, 90)
    assert second["channel_thresholds"] == {"whatsapp": 700, "voice": 300}
    third = data(put(client, {"monthly_cap_cents": None}))
    assert third["monthly_cap_cents"] is None
    assert third["daily_cap_cents"] == 2500
    stored = data(client.get(BUDGET))
    assert stored["daily_cap_cents"] == 2500
    assert stored["updated_at"]


def test_out_of_range_values_are_dropped(tenant):
    client = tenant.client()
    data(put(client, {"monthly_cap_cents": 9000, "daily_cap_cents": 300,
                      "alert_at_percent": 70}))
    body = data(put(client, {"monthly_cap_cents": 100_000_000_001, "daily_cap_cents": -1,
                             "alert_at_percent": 101, "channel_thresholds": {"sms": "x",
                                                                             "rcs": 5},
                             "colour": "red"}))
    assert sorted(body["dropped"]) == sorted(["monthly_cap_cents", "daily_cap_cents",
                                              "alert_at_percent", "channel_thresholds.sms",
                                              "colour"])
    assert (body["monthly_cap_cents"], body["daily_cap_cents"], body["alert_at_percent"]) == (
        9000, 300, 70)
    assert body["channel_thresholds"] == {"rcs": 5}
    for bad in ({"alert_at_percent": 0}, {"alert_at_percent": True},
                {"daily_cap_cents": "100"}, {"daily_cap_cents": 1.5},
                {"channel_thresholds": [1]}):
        assert data(put(client, bad))["dropped"] == list(bad)
    assert data(client.get(BUDGET))["alert_at_percent"] == 70
    refused = client.put(BUDGET, [1, 2], format="json")
    assert refused.status_code == 422
    assert refused.json()["error"]["details"]["issues"][0]["field"] == "body"


def _alerts(org):
    return list(Event.objects.for_organization(org).filter(type="ai.budget.alert")
                .order_by("created_at").values_list("data", flat=True))


def test_crossing_the_alert_percent_emits_once_per_period(org_tz):
    org, client = org_tz.org, org_tz.client()
    with time_machine.travel(NOW, tick=False):
        usage(org, NOW - timedelta(minutes=5), cost=39)
        data(put(client, {"daily_cap_cents": 50}))  # 39 of 50 = 78% < 80%
        assert _alerts(org) == []
        usage(org, NOW - timedelta(minutes=1), cost=1)  # 40 of 50 = 80%
        assert tasks.refresh.delay().get()["alerts"] == 1
        assert tasks.refresh.delay().get()["alerts"] == 0
        data(put(client, {"alert_at_percent": 50}))
        usage(org, NOW - timedelta(seconds=1), cost=30)  # same day: no second alert
        tasks.refresh.delay()
    alerts = _alerts(org)
    assert len(alerts) == 1
    assert alerts[0] == {"period": "day", "period_start": "2026-03-20", "cap_cents": 50,
                         "spend_cents": 40, "alert_at_percent": 80, "percent": 80.0,
                         "currency": "USD", "timezone": "America/New_York"}
    # The next local day is a new period.
    with time_machine.travel(NOW + timedelta(days=1), tick=False):
        usage(org, NOW + timedelta(days=1, minutes=-1), cost=25)  # 25 of 50 = 50%
        tasks.refresh.delay()
        tasks.refresh.delay()
    assert [a["period_start"] for a in _alerts(org)] == ["2026-03-20", "2026-03-21"]


def test_monthly_cap_alert(tenant):
    org, client = tenant.org, tenant.client()
    with time_machine.travel(NOW, tick=False):
        usage(org, at("2026-03-02T00:00:00Z"), cost=900)
        data(put(client, {"monthly_cap_cents": 1000, "alert_at_percent": 90}))
    alerts = _alerts(org)
    assert [(a["period"], a["period_start"], a["spend_cents"]) for a in alerts] == [
        ("month", "2026-03-01", 900)]
