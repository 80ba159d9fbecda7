"""Reads of the RCS family: agent quality, the analytics aggregations, the catalog.

The analytics are one SQL aggregation each over the organization's outbound RCS message
records in the window, served by `messaging_msg_org_created` (organization, created_at).
`read` counts messages with a READ receipt (`metadata.read_at`, recorded by the inbound
pipeline from Google's READ user event).
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.db.models import Count, Q, QuerySet, Value
from django.db.models.functions import Coalesce, TruncDate
from django.utils import timezone

from messaging.models import Direction, Message

from .models import RcsAgent, RcsCatalogProduct

NO_TEMPLATE = "(no template)"
SENT_STATUSES = ("sent", "delivered", "undelivered")


def agents(organization) -> QuerySet:
    return RcsAgent.objects.for_organization(organization).select_related("brand")


def quality(agent: RcsAgent) -> dict[str, Any]:
    """Document 2, 2.8 agent quality: exactly these fields."""
    statuses = {str(k): {"status": str((v or {}).get("status", "UNKNOWN"))}
                for k, v in (agent.carrier_statuses or {}).items() if isinstance(v, dict)}
    return {
        "bot_id": agent.pk, "display_name": agent.display_name,
        "brand_name": agent.brand.name, "status": agent.status,
        "verification_status": agent.verification_status, "launched": agent.launched,
        "carrier_statuses": statuses, "carriers_launched": agent.carriers_launched,
        "carriers_total": len(statuses),
    }


def _window(organization, days: int) -> QuerySet:
    since = timezone.now() - timedelta(days=days)
    return Message.objects.for_organization(organization).filter(
        channel="rcs", direction=Direction.OUTBOUND, created_at__gte=since)


def _counts() -> dict[str, Any]:
    return {
        "sent": Count("id", filter=Q(sent_at__isnull=False) | Q(status__in=SENT_STATUSES)),
        "delivered": Count("id", filter=Q(status="delivered")),
        "read": Count("id", filter=Q(metadata__has_key="read_at")),
        "failed": Count("id", filter=Q(status__in=("failed", "undelivered", "expired"))),
    }


def template_analytics(organization, *, days: int) -> list[dict[str, Any]]:
    """One row per template name in the window, by volume (then name); messages without a
    template share the `(no template)` row."""
    rows = (_window(organization, days)
            .annotate(template=Coalesce("template_name", Value(NO_TEMPLATE)))
            .values("template").annotate(messages=Count("id"), **_counts())
            .order_by("-messages", "template"))
    return [{"template_name": r["template"], "messages": r["messages"], "sent": r["sent"],
             "delivered": r["delivered"], "read": r["read"], "failed": r["failed"]}
            for r in rows]


def daily_analytics(organization, *, days: int) -> list[dict[str, Any]]:
    """Per UTC day of the window (days without messages omitted), oldest first."""
    rows = (_window(organization, days).annotate(day=TruncDate("created_at"))
            .values("day").annotate(messages=Count("id"), **_counts()).order_by("day"))
    return [{"date": r["day"].isoformat(), "messages": r["messages"], "sent": r["sent"],
             "delivered": r["delivered"], "read": r["read"], "failed": r["failed"]}
            for r in rows]


def catalog(organization) -> QuerySet:
    return RcsCatalogProduct.objects.for_organization(organization).order_by("id")
