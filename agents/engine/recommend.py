"""Recommendations computed from the organization's own figures (channel choice,
dashboard insights). The numbers are real; the engine only phrases them (templated in
local mode)."""

from __future__ import annotations

import json
from typing import Any

from platform_core.tenancy.models import Organization

from .helpers import TaskResult, run

# With no history on a channel, a prior so that a channel is never ranked on nothing.
_PRIOR_DELIVERY = {"sms": 0.95, "whatsapp": 0.97, "rcs": 0.93, "email": 0.9, "mms": 0.9,
                   "voice": 0.8}


def channel_ranking(stats: list[dict[str, Any]], candidates: list[str]) -> dict[str, Any]:
    by_channel = {row["channel"]: row for row in stats}
    ranking = []
    for channel in candidates:
        row = by_channel.get(channel, {})
        sent, delivered = row.get("sent", 0), row.get("delivered", 0)
        replies = row.get("replies", 0)
        # Laplace-smoothed rates: a handful of messages moves the prior, it doesn't replace it.
        delivery = (delivered + 10 * _PRIOR_DELIVERY.get(channel, 0.9)) / (sent + 10)
        reply = (replies + 0.5) / (sent + 10)
        score = round(0.7 * delivery + 0.3 * min(reply, 1.0), 4)
        ranking.append({"channel": channel, "sent": sent, "delivered": delivered,
                        "failed": row.get("failed", 0), "replies": replies,
                        "delivery_rate": round(delivered / sent, 4) if sent else None,
                        "reply_rate": round(replies / sent, 4) if sent else None,
                        "score": score})
    ranking.sort(key=lambda r: (-r["score"], r["channel"]))
    best = ranking[0]
    basis = (f"{best['delivered']} of {best['sent']} delivered"
             if best["sent"] else "no history yet: the channel's typical delivery rate")
    return {"recommended_channel": best["channel"], "ranking": ranking,
            "rationale": f"{best['channel']} scores highest on delivery and replies ({basis})."}


def optimize_channel(organization: Organization, *, stats: list[dict[str, Any]],
                     candidates: list[str], days: int) -> TaskResult:
    computed = channel_ranking(stats, candidates)
    return run(organization, feature="optimize_channel",
               payload=json.dumps({"window_days": days, "figures": computed["ranking"]}),
               instruction="Recommend the best channel from these delivery and reply figures "
                           "(keep the ranking as computed; explain in `rationale`).",
               compute=lambda: computed)


def _change(now: int, before: int) -> float | None:
    return round((now - before) * 100.0 / before, 1) if before else None


def insights_from(figures: dict[str, Any], days: int) -> dict[str, Any]:
    insights = []
    sent, delivered, failed = figures["sent"], figures["delivered"], figures["failed"]
    change = _change(sent, figures["sent_before"])
    insights.append({"key": "outbound_volume", "title": "Outbound messages",
                     "value": sent, "change_percent": change,
                     "detail": f"{sent} messages sent in the last {days} days"
                               + (f" ({change:+.1f}% on the previous period)."
                                  if change is not None else ".")})
    if sent:
        rate = round(delivered * 100.0 / sent, 1)
        insights.append({"key": "delivery_rate", "title": "Delivery rate", "value": rate,
                         "change_percent": None,
                         "detail": f"{rate}% delivered, {failed} failed."
                                   + (" Check failing numbers and sender setup."
                                      if rate < 90 else "")})
    reply_change = _change(figures["inbound"], figures["inbound_before"])
    insights.append({"key": "inbound_volume", "title": "Customer messages",
                     "value": figures["inbound"], "change_percent": reply_change,
                     "detail": f"{figures['inbound']} inbound messages; "
                               f"{figures['open_conversations']} conversations open, "
                               f"{figures['new_conversations']} new."})
    insights.append({"key": "ai_calls", "title": "AI calls", "value": figures["ai_calls"],
                     "change_percent": None,
                     "detail": f"{figures['ai_calls']} metered AI calls in the period."})
    return {"period_days": days, "figures": figures, "insights": insights}


def dashboard_insights(organization: Organization, *, figures: dict[str, Any],
                       days: int) -> TaskResult:
    return run(organization, feature="dashboard_insights",
               payload=json.dumps({"window_days": days, "figures": figures}),
               instruction="Write short dashboard insights from these messaging figures.",
               compute=lambda: insights_from(figures, days))
