"""Template analytics (Document 2, 2.3): totals, rates, per-campaign rows, `degraded`.

Totals over the outbound messages sent from the template variant (same channel, name and
language), all time:

- `sent`: every such message past scheduling (queued, sent, delivered, undelivered,
  failed, expired; scheduled and canceled ones are not sends);
- `delivered`: status `delivered`;
- `failed`: status `failed`, `undelivered` or `expired`;
- `opened`: read receipts (the message's `read_at` when the model has one, else the
  `message.read` / `message.opened` events counted by `counters.py`);
- `clicked`: messages with at least one tracked-link click (`links.LinkClick`).

Rates are fractions rounded to two decimals, 0.0 when the denominator is 0:
`delivery_rate` = delivered / (delivered + failed) (terminal messages),
`open_rate` = opened / delivered, `click_rate` = clicked / delivered.

`campaigns`: one row per campaign (broadcast) that sent the template, from the message's
`campaign_id` when the messaging model has that field; until broadcasts exist the list is
empty. Each row carries the same counters and rates plus the campaign's `name` and
`status` from the resolver the broadcasts family registers with
`register_campaign_resolver(fn)`, `fn(organization, ids) -> {id: {"name", "status"}}`.

The live scan runs under a time budget (`TEMPLATE_ANALYTICS_SCAN_BUDGET_MS`, default
2000; PostgreSQL `statement_timeout`). When it runs over, the answer comes from the
denormalized daily counters instead and carries `degraded: true` (very recent sends may
be missing); otherwise `degraded: false`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from django.apps import apps
from django.conf import settings
from django.db import OperationalError, connection, transaction
from django.db.models import Count, Q, Sum

from .counters import message_has_field
from .models import MessageTemplate, TemplateDailyStat, TemplateMessageMark

logger = logging.getLogger("templates.analytics")

COUNTERS = ("sent", "delivered", "failed", "opened", "clicked")
NOT_SENDS = ("scheduled", "canceled", "received")
FAILURES = ("failed", "undelivered", "expired")

CampaignResolver = Callable[[Any, list[str]], dict[str, dict]]
_campaign_resolver: CampaignResolver | None = None


def register_campaign_resolver(resolver: CampaignResolver | None) -> None:
    global _campaign_resolver
    _campaign_resolver = resolver


class ScanTimeout(Exception):
    pass


def budget_ms() -> int:
    return int(getattr(settings, "TEMPLATE_ANALYTICS_SCAN_BUDGET_MS", 2000))


def rate(numerator: int, denominator: int) -> float:
    return round(numerator / denominator, 2) if denominator else 0.0


def _with_rates(counts: dict[str, int]) -> dict[str, Any]:
    return {
        "delivery_rate": rate(counts["delivered"], counts["delivered"] + counts["failed"]),
        "open_rate": rate(counts["opened"], counts["delivered"]),
        "click_rate": rate(counts["clicked"], counts["delivered"]),
    }


def _zero() -> dict[str, int]:
    return dict.fromkeys(COUNTERS, 0)


def _messages(template: MessageTemplate):
    Message = apps.get_model("messaging", "Message")
    return Message, (
        Message.objects.for_organization(template.organization)
        .filter(direction="outbound", channel=template.channel, template_name=template.name,
                language=template.language)
        .exclude(status__in=NOT_SENDS)
    )


def _scan(template: MessageTemplate) -> dict[str, dict[str, int]]:
    """Counters per campaign id ("" = no campaign), read from the messages themselves."""
    Message, messages = _messages(template)
    has_campaign = message_has_field(Message, "campaign_id")
    has_read = message_has_field(Message, "read_at")
    aggregates = {
        "sent": Count("pk"),
        "delivered": Count("pk", filter=Q(status="delivered")),
        "failed": Count("pk", filter=Q(status__in=FAILURES)),
    }
    if has_read:
        aggregates["opened"] = Count("pk", filter=Q(read_at__isnull=False))
    group = "campaign_id" if has_campaign else None
    rows: dict[str, dict[str, int]] = {}
    if group:
        for row in messages.values(group).annotate(**aggregates).order_by():
            rows[row[group] or ""] = {k: row.get(k, 0) for k in COUNTERS}
    else:
        row = messages.aggregate(**aggregates)
        if row["sent"]:
            rows[""] = {k: row.get(k) or 0 for k in COUNTERS}
    if not rows:
        return {}
    for counts in rows.values():
        counts.setdefault("opened", 0)
        counts.setdefault("clicked", 0)
    if not has_read:
        marks = (TemplateMessageMark.objects.for_organization(template.organization)
                 .filter(template=template, opened=True).values("campaign_id")
                 .annotate(n=Count("pk")).order_by())
        for row in marks:
            if row["campaign_id"] in rows:
                rows[row["campaign_id"]]["opened"] = row["n"]
    try:
        LinkClick = apps.get_model("links", "LinkClick")
    except LookupError:
        return rows
    message_ids = messages.values("pk")
    clicks = LinkClick.objects.for_organization(template.organization).filter(
        message_id__in=message_ids)
    if group:
        for row in (clicks.values("campaign_id")
                    .annotate(n=Count("message_id", distinct=True)).order_by()):
            key = row["campaign_id"] or ""
            if key in rows:
                rows[key]["clicked"] = row["n"]
    else:
        rows[""]["clicked"] = clicks.values("message_id").distinct().count()
    return rows


def _scan_within_budget(template: MessageTemplate) -> dict[str, dict[str, int]]:
    budget = budget_ms()
    if connection.vendor != "postgresql":
        return _scan(template)
    try:
        with transaction.atomic():
            with connection.cursor() as cursor:
                cursor.execute("SELECT current_setting('statement_timeout')")
                previous = cursor.fetchone()[0]
                cursor.execute("SELECT set_config('statement_timeout', %s, true)",
                               [str(max(budget, 1))])
            rows = _scan(template)
            with connection.cursor() as cursor:
                cursor.execute("SELECT set_config('statement_timeout', %s, true)", [previous])
            return rows
    except OperationalError as exc:
        if getattr(getattr(exc, "__cause__", None), "sqlstate", None) == "57014" or (
                "statement timeout" in str(exc)):
            raise ScanTimeout from exc
        raise


def _from_counters(template: MessageTemplate) -> dict[str, dict[str, int]]:
    rows: dict[str, dict[str, int]] = {}
    for row in (TemplateDailyStat.objects.for_organization(template.organization)
                .filter(template=template).values("campaign_id")
                .annotate(**{k: Sum(k) for k in COUNTERS}).order_by()):
        rows[row["campaign_id"] or ""] = {k: row[k] or 0 for k in COUNTERS}
    return rows


def template_analytics(template: MessageTemplate) -> dict[str, Any]:
    degraded = False
    try:
        rows = _scan_within_budget(template)
    except ScanTimeout:
        logger.warning("template analytics scan of %s ran over %s ms; using counters",
                       template.pk, budget_ms())
        degraded = True
        rows = _from_counters(template)
    totals = _zero()
    for counts in rows.values():
        for key in COUNTERS:
            totals[key] += counts[key]
    campaign_ids = sorted(k for k in rows if k)
    info: dict[str, dict] = {}
    if campaign_ids and _campaign_resolver is not None:
        try:
            info = _campaign_resolver(template.organization, campaign_ids) or {}
        except Exception:
            logger.exception("campaign resolver failed")
    campaigns = []
    for campaign_id in campaign_ids:
        counts = rows[campaign_id]
        meta = info.get(campaign_id) or {}
        campaigns.append({
            "campaign_id": campaign_id,
            "name": meta.get("name"),
            "status": meta.get("status"),
            "totals": counts,
            "rates": _with_rates(counts),
        })
    return {
        "template": {"id": template.pk, "name": template.name, "channel": template.channel,
                     "language": template.language, "status": template.status},
        "totals": totals,
        "rates": _with_rates(totals),
        "campaigns": campaigns,
        "degraded": degraded,
    }
