"""The analytics screen: messages per day by channel and by status, the delivery rate,
the verify conversion and the LLM spend against the budget, for the last 7 or 30 days.

Every figure comes from an insights selector (read on the replica when one is set, as the
insights API reads); the charts are SVG drawn on the server (charts.py), each with its
numbers in a table below it.
"""

from __future__ import annotations

from datetime import timedelta

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils import timezone

from dashboard.views.base import DashboardView
from insights.db import replica_reads
from insights.selectors import messaging as messaging_figures
from insights.selectors import spend
from insights.window import Window, local_midnight, org_zone

from . import charts
from .charts import Chart, Series

RANGES = {"7": 7, "30": 30}
DEFAULT_RANGE = "7"


def last_days(organization, days: int) -> Window:
    """The last `days` local days of the organization, today included, up to now."""
    tz = org_zone(organization)
    now = timezone.now()
    first = now.astimezone(tz).date() - timedelta(days=days - 1)
    return Window(start=local_midnight(first, tz), end=now, tz=tz)


def _volume_charts(volume: dict) -> list[Chart]:
    days = [d["day"] for d in volume["series"]]
    by_channel = {c: [d["channels"].get(c, 0) for d in volume["series"]]
                  for c in volume["channels"]}
    by_status = {s: [d["statuses"].get(s, 0) for d in volume["series"]]
                 for s in volume["statuses"]}
    rate = [d["delivery_rate"] or 0 for d in volume["series"]]
    totals = volume["totals"]
    return [
        charts.build(Chart(
            id="messages-by-channel", title="Messages per day by channel",
            description=f"{totals['messages']:,} messages in the period, stacked by channel.",
            days=days, series=charts.colored(volume["channels"], by_channel))),
        charts.build(Chart(
            id="messages-by-status", title="Messages per day by status",
            description="Each day's messages stacked by their current status.",
            days=days, series=charts.colored(volume["statuses"], by_status))),
        charts.build(Chart(
            id="delivery-rate", title="Delivery rate",
            description=(f"Delivered over delivered or failed outbound messages: "
                         f"{charts.format_value(totals['delivery_rate'], '%')} over the "
                         f"period ({totals['delivered']:,} of {totals['settled']:,})."),
            days=days, unit="%", series=[Series("delivery rate", rate, "#067647")]),
            maximum=100),
    ]


def _verify_chart(conversion: dict) -> Chart:
    series = conversion["series"]
    totals = conversion["totals"]
    return charts.build(Chart(
        id="verify-conversion", title="Verify conversion",
        description=(f"Verifications started and verified per day: "
                     f"{charts.format_value(totals['conversion_rate'], '%')} converted "
                     f"({totals['verified']:,} of {totals['started']:,})."),
        days=[d["day"] for d in series],
        series=charts.colored(["verified", "not verified"], {
            "verified": [d["verified"] for d in series],
            "not verified": [d["started"] - d["verified"] for d in series]})))


def _spend_chart(timeseries: dict, budget_cap: int | None) -> Chart:
    series = timeseries["series"]
    cap = (f" against the daily cap of {charts.format_value(budget_cap, 'cents')}"
           if budget_cap else " (no daily cap set)")
    return charts.build(Chart(
        id="llm-spend", title="LLM spend per day",
        description=(f"{charts.format_value(timeseries['totals']['total_cost_cents'], 'cents')}"
                     f" {timeseries['currency']} in the period{cap}."),
        days=[d["bucket"][:10] for d in series], unit="cents",
        series=[Series("spend", [d["total_cost_cents"] for d in series], "#7a5af8")],
        reference=budget_cap, reference_label="daily cap"))


class AnalyticsView(DashboardView):
    required_scopes = {"GET": "insights:read"}

    def get(self, request: HttpRequest) -> HttpResponse:
        selected = request.GET.get("range", DEFAULT_RANGE)
        if selected not in RANGES:
            selected = DEFAULT_RANGE
        organization = self.principal.organization
        window = last_days(organization, RANGES[selected])
        context: dict = {"ranges": [("7", "Last 7 days"), ("30", "Last 30 days")],
                         "selected": selected, "window": window, "charts": []}
        with replica_reads():
            if self.can("messages:read"):
                volume = messaging_figures.message_volume(organization, window)
                context["charts"] += _volume_charts(volume)
                context["volume"] = volume
            if self.can("verify:read"):
                context["charts"].append(_verify_chart(
                    messaging_figures.verify_conversion(organization, window)))
            overview = spend.overview(organization)
            context["charts"].append(_spend_chart(spend.timeseries(organization, window),
                                                  overview["daily_cap_cents"]))
        context["overview"] = overview
        month = overview["month_to_date"]
        money = {"month": month["spend_cents"], "month_cap": overview["monthly_cap_cents"],
                 "projected": month["projected_month_end_cents"],
                 "today": overview["today"]["spend_cents"],
                 "daily_cap": overview["daily_cap_cents"]}
        context["money"] = {k: charts.format_value(v, "cents") if v is not None else None
                            for k, v in money.items()}
        context["month_percent"] = month["cap_percentage"]
        context["month_bar"] = min(month["cap_percentage"] or 0, 100)
        return render(request, "dashboard/analytics/index.html", context)
