"""Reads of verify: the list filters, analytics and the conversion-anomaly report (each
report is one SQL aggregation over the window)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.db.models import (
    Avg,
    Case,
    CharField,
    Count,
    DurationField,
    ExpressionWrapper,
    F,
    FloatField,
    Q,
    QuerySet,
    Sum,
    Value,
    When,
)
from django.utils import timezone

from platform_core.errors import validation_error

from . import conf
from .models import OPEN_STATUSES, Status, Verification

WINDOW_DEFAULT, WINDOW_MIN, WINDOW_MAX = 30, 1, 90
# A prefix needs this many sends before it can be flagged (small samples are noise).
ANOMALY_MIN_SENT = 10
# score = how far the prefix's conversion falls below the baseline (0 at or above it, 1 at
# zero conversion); bands: >= 0.8 high, >= 0.5 medium, else low; anomaly = high or medium
# with enough volume.
BANDS = ((0.8, "high"), (0.5, "medium"), (0.0, "low"))


def window_days(params, *, clamp: bool = True) -> int:
    raw = params.get("window_days")
    if raw in (None, ""):
        return WINDOW_DEFAULT
    try:
        value = int(raw)
    except (TypeError, ValueError):
        raise validation_error("window_days", "window_days must be an integer.",
                               status=400) from None
    if clamp:
        return min(max(value, WINDOW_MIN), WINDOW_MAX)
    if not WINDOW_MIN <= value <= WINDOW_MAX:
        raise validation_error("window_days", f"window_days must be between {WINDOW_MIN} and "
                                              f"{WINDOW_MAX}.", status=400)
    return value


def effective_status():
    """Open verifications past their expiry count as `expired` (before the sweep runs)."""
    return Case(When(status__in=OPEN_STATUSES, expires_at__lte=timezone.now(),
                     then=Value(Status.EXPIRED)),
                default=F("status"), output_field=CharField())


def verifications_filtered(queryset: QuerySet, params) -> QuerySet:
    if params.get("status"):
        statuses = [s for s in params.get("status").split(",") if s]
        bad = [s for s in statuses if s not in Status.values]
        if bad:
            raise validation_error("status", f"Unknown status {bad[0]!r}.", status=400)
        queryset = queryset.alias(effective=effective_status()).filter(effective__in=statuses)
    if params.get("channel"):
        queryset = queryset.filter(channel__in=params.get("channel").split(","))
    if params.get("to"):
        queryset = queryset.filter(to=params.get("to").strip())
    if params.get("profile_id"):
        queryset = queryset.filter(profile_id=params.get("profile_id"))
    return queryset


def _since(days: int):
    return timezone.now() - timedelta(days=days)


def analytics(organization, *, days: int) -> dict[str, Any]:
    rows = list(
        Verification.objects.for_organization(organization)
        .filter(created_at__gte=_since(days))
        .annotate(effective=effective_status())
        .order_by().values("effective", "channel")
        .annotate(n=Count("id"),
                  seconds=Avg(ExpressionWrapper(F("verified_at") - F("created_at"),
                                                output_field=DurationField()),
                              filter=Q(status=Status.VERIFIED))))
    by_status = {status: 0 for status in Status.values}
    by_channel: dict[str, int] = {}
    verified_total, weighted = 0, 0.0
    for row in rows:
        by_status[row["effective"]] += row["n"]
        by_channel[row["channel"]] = by_channel.get(row["channel"], 0) + row["n"]
        if row["effective"] == Status.VERIFIED and row["seconds"] is not None:
            verified_total += row["n"]
            weighted += row["seconds"].total_seconds() * row["n"]
    return {
        "window_days": days,
        "total": sum(by_status.values()),
        "by_status": by_status,
        "by_channel": by_channel,
        "avg_verify_seconds": round(weighted / verified_total, 3) if verified_total else None,
    }


def _band(score: float) -> str:
    return next(name for floor, name in BANDS if score >= floor)


def conversion_anomaly(organization, *, days: int) -> dict[str, Any]:
    prices = conf.prices_usd()
    price = Case(*[When(channel=c, then=Value(p)) for c, p in prices.items()],
                 default=Value(prices["sms"]), output_field=FloatField())
    rows = list(
        Verification.objects.for_organization(organization)
        .filter(created_at__gte=_since(days)).exclude(destination_prefix="")
        .order_by().values("destination_prefix")
        .annotate(sent=Count("id"),
                  verified=Count("id", filter=Q(status=Status.VERIFIED)),
                  unverified_spend=Sum(price, filter=~Q(status=Status.VERIFIED)))
        .order_by("destination_prefix"))
    total_sent = sum(r["sent"] for r in rows)
    total_verified = sum(r["verified"] for r in rows)
    baseline = total_verified / total_sent if total_sent else None
    destinations = []
    for row in rows:
        rate = row["verified"] / row["sent"]
        score = max(0.0, (baseline - rate) / baseline) if baseline else 0.0
        band = _band(score)
        anomaly = band != "low" and row["sent"] >= ANOMALY_MIN_SENT
        destinations.append({
            "prefix": row["destination_prefix"], "sent": row["sent"],
            "verified": row["verified"], "conversion_rate": round(rate, 4),
            "score": round(score, 4), "band": band, "anomaly": anomaly,
            "estimated_spend_at_risk_usd": round(row["unverified_spend"] or 0.0, 4)
            if anomaly else 0.0,
        })
    destinations.sort(key=lambda d: (-d["score"], -d["sent"], d["prefix"]))
    flagged = [d for d in destinations if d["anomaly"]]
    return {
        "window_days": days,
        "total_sent": total_sent,
        "total_verified": total_verified,
        "baseline_conversion_rate": round(baseline, 4) if baseline is not None else None,
        "flagged_destinations": len(flagged),
        "estimated_spend_at_risk_usd": round(sum(d["estimated_spend_at_risk_usd"]
                                                 for d in flagged), 4),
        "destinations": destinations,
    }
