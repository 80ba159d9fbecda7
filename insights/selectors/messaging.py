"""Messaging figures of the analytics screen: messages per local day by channel and by
status, the delivery rate, and the verify conversion per day. Each is one grouped query
over the window on the (organization, created_at) indexes; days are the organization's
time zone, like every insights bucket."""

from __future__ import annotations

from typing import Any

from django.db.models import Count, Q
from django.db.models.functions import TruncDate

from messaging.models import FAILURE_STATUSES, Direction, Message, MessageStatus
from messaging.verify.models import Status as VerifyStatus
from messaging.verify.models import Verification

from ..window import Window, bucket_keys
from .common import percent

# Outbound messages handed to a provider with a known outcome: the delivery rate's whole.
SETTLED = frozenset({MessageStatus.DELIVERED, *FAILURE_STATUSES})


def message_volume(organization, window: Window) -> dict[str, Any]:
    """Per local day: messages by channel and by status (both directions), outbound
    delivered and settled (delivered or failed) with the day's delivery rate."""
    rows = (
        Message.objects.for_organization(organization)
        .filter(created_at__gte=window.start, created_at__lt=window.end)
        .annotate(day=TruncDate("created_at", tzinfo=window.tz))
        .values("day", "channel", "status", "direction").annotate(n=Count("pk")).order_by()
    )
    days = {key: {"channels": {}, "statuses": {}, "total": 0, "delivered": 0, "settled": 0}
            for key in bucket_keys(window)}
    channels: set[str] = set()
    statuses: set[str] = set()
    for row in rows:
        day = days.get(row["day"])
        if day is None:  # a row on the window's edge outside its local days
            continue
        n = row["n"]
        day["total"] += n
        day["channels"][row["channel"]] = day["channels"].get(row["channel"], 0) + n
        day["statuses"][row["status"]] = day["statuses"].get(row["status"], 0) + n
        channels.add(row["channel"])
        statuses.add(row["status"])
        if row["direction"] == Direction.OUTBOUND and row["status"] in SETTLED:
            day["settled"] += n
            if row["status"] == MessageStatus.DELIVERED:
                day["delivered"] += n
    series = [{"day": key.isoformat(), **value,
               "delivery_rate": percent(value["delivered"], value["settled"])}
              for key, value in days.items()]
    delivered = sum(d["delivered"] for d in series)
    settled = sum(d["settled"] for d in series)
    return {
        **window.as_dict(),
        "channels": sorted(channels),
        "statuses": [s for s in MessageStatus.values if s in statuses],
        "series": series,
        "totals": {"messages": sum(d["total"] for d in series), "delivered": delivered,
                   "settled": settled, "delivery_rate": percent(delivered, settled)},
    }


def verify_conversion(organization, window: Window) -> dict[str, Any]:
    """Per local day: verifications started and verified, and the conversion rate."""
    rows = (
        Verification.objects.for_organization(organization)
        .filter(created_at__gte=window.start, created_at__lt=window.end)
        .annotate(day=TruncDate("created_at", tzinfo=window.tz))
        .values("day").order_by()
        .annotate(started=Count("pk"),
                  verified=Count("pk", filter=Q(status=VerifyStatus.VERIFIED)))
    )
    found = {row["day"]: (row["started"], row["verified"]) for row in rows}
    series = []
    for key in bucket_keys(window):
        started, verified = found.get(key, (0, 0))
        series.append({"day": key.isoformat(), "started": started, "verified": verified,
                       "conversion_rate": percent(verified, started)})
    started = sum(d["started"] for d in series)
    verified = sum(d["verified"] for d in series)
    return {**window.as_dict(), "series": series,
            "totals": {"started": started, "verified": verified,
                       "conversion_rate": percent(verified, started)}}
