"""Reads of the WhatsApp channel: status summary, lists, call KPIs and the flow funnel."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

from django.db.models import Avg, Count, Q, QuerySet, Sum
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from platform_core.api.serialization import iso_utc
from platform_core.errors import validation_error

from . import flowjson
from .gateway import account_for
from .models import (
    BlockedUser,
    Call,
    CallDirection,
    CallStatus,
    Catalog,
    Connection,
    Flow,
    FlowSend,
    FlowSubmission,
    Product,
)

ANALYTICS_DAYS = 30
FUNNEL_DAYS = 30


def connections(organization) -> QuerySet:
    return Connection.objects.for_organization(organization)


def status_summary(organization) -> dict[str, Any]:
    rows = list(connections(organization).order_by("-is_default", "created_at"))
    default = next((c for c in rows if c.is_default), rows[0] if rows else None)
    account = account_for(organization)
    return {
        "connected": bool(rows),
        "mode": "test" if organization.sandbox else "live",
        "waba_ids": sorted({c.waba_id for c in rows}),
        "business_ids": sorted({c.business_id for c in rows if c.business_id}),
        "connection_count": len(rows),
        "default_phone_number_id": default.phone_number_id if default else None,
        "default_display_phone_number": default.display_phone_number if default else None,
        "credentials_configured": bool(account and account.credentials.get("access_token")),
        "calling_enabled_count": sum(1 for c in rows if c.calling_enabled),
    }


def catalogs(organization) -> QuerySet:
    return (Catalog.objects.for_organization(organization)
            .annotate(product_count=Count("products")))


def products(organization, catalog: Catalog) -> QuerySet:
    return Product.objects.for_organization(organization).filter(catalog=catalog)


def calls(organization) -> QuerySet:
    return Call.objects.for_organization(organization).select_related("connection")


def blocked(organization) -> QuerySet:
    return BlockedUser.objects.for_organization(organization)


def flows(organization) -> QuerySet:
    return Flow.objects.for_organization(organization)


def call_analytics(organization, *, days: int = ANALYTICS_DAYS) -> dict[str, Any]:
    """Volume, accept rate, duration and spend of the last `days` days, one query."""
    since = timezone.now() - timedelta(days=days)
    answered = Q(status__in=[CallStatus.ACCEPTED, CallStatus.COMPLETED]) | Q(
        answered_at__isnull=False)
    totals = Call.objects.for_organization(organization).filter(created_at__gte=since).aggregate(
        total=Count("id"),
        inbound=Count("id", filter=Q(direction=CallDirection.INBOUND)),
        outbound=Count("id", filter=Q(direction=CallDirection.OUTBOUND)),
        accepted=Count("id", filter=answered),
        declined=Count("id", filter=Q(status=CallStatus.DECLINED)),
        missed=Count("id", filter=Q(status=CallStatus.MISSED)),
        duration=Sum("duration_seconds"),
        avg_duration=Avg("duration_seconds", filter=Q(duration_seconds__gt=0)),
        spend=Sum("cost"),
    )
    total = totals["total"] or 0
    return {
        "window_days": days,
        "since": iso_utc(since),
        "volume": {"total": total, "inbound": totals["inbound"],
                   "outbound": totals["outbound"]},
        "accepted": totals["accepted"], "declined": totals["declined"],
        "missed": totals["missed"],
        "accept_rate": round(totals["accepted"] / total, 4) if total else None,
        "total_duration_seconds": totals["duration"] or 0,
        "avg_duration_seconds": round(float(totals["avg_duration"]), 1)
        if totals["avg_duration"] is not None else None,
        "spend": str((totals["spend"] or Decimal("0")).quantize(Decimal("0.0001"))),
        "currency": "USD",
    }


def _moment(params, name: str) -> datetime | None:
    raw = params.get(name)
    if raw in (None, ""):
        return None
    try:
        value = parse_datetime(str(raw))
    except ValueError:
        value = None
    if value is None:
        raise validation_error(name, f"{name} is an ISO 8601 date-time.")
    if timezone.is_naive(value):
        value = timezone.make_aware(value, UTC)
    return value


def funnel_window(params) -> tuple[datetime, datetime]:
    until = _moment(params, "until") or timezone.now()
    since = _moment(params, "since") or until - timedelta(days=FUNNEL_DAYS)
    if since > until:
        raise validation_error("since", "since is before until.")
    return since, until


def flow_funnel(flow: Flow, *, since: datetime, until: datetime) -> dict[str, Any]:
    """Per-step counts from the recorded sends and submissions in [since, until].

    Steps: `sent` (flow messages), one step per screen in the flow JSON order (a
    submission reached a screen when its response carries one of the screen's fields; a
    screen without fields is reached by every submission), then `completed`.
    """
    organization = flow.organization
    sent = FlowSend.objects.for_organization(organization).filter(
        flow=flow, created_at__gte=since, created_at__lte=until).count()
    responses = list(FlowSubmission.objects.for_organization(organization).filter(
        flow=flow, created_at__gte=since, created_at__lte=until)
        .values_list("response", flat=True)[:50_000])
    completed = len(responses)
    steps = [{"step": "sent", "count": sent}]
    for screen in (flow.definition or {}).get("screens") or []:
        fields = set(flowjson.screen_fields(screen))
        reached = completed if not fields else sum(
            1 for r in responses if isinstance(r, dict) and fields & set(r))
        steps.append({"step": screen.get("id"), "count": reached})
    steps.append({"step": "completed", "count": completed})
    previous = None
    for step in steps:
        before = previous if previous is not None else step["count"]
        step["drop_off"] = max(before - step["count"], 0)
        step["drop_off_rate"] = round(step["drop_off"] / before, 4) if before else 0.0
        previous = step["count"]
    return {"flow_id": flow.pk, "since": iso_utc(since),
            "until": iso_utc(until), "sent": sent,
            "completed": completed,
            "completion_rate": round(completed / sent, 4) if sent else None, "steps": steps}
