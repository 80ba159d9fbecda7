"""Reads of the templates family: list filters, the summary, the localization tracker."""

from __future__ import annotations

from typing import Any

from django.db.models import Count, Q, QuerySet

from platform_core.errors import validation_error

from .models import MessageTemplate, TemplateChannel, TemplateStatus


def _one_of(params, name: str, allowed: list[str]) -> list[str]:
    raw = [v for value in params.getlist(name) for v in value.split(",") if v.strip()]
    values = [v.strip().lower() for v in raw]
    bad = [v for v in values if v not in allowed]
    if bad:
        raise validation_error(name, f"{name} is one of {', '.join(allowed)}.", status=400)
    return values


def templates_filtered(queryset: QuerySet, params) -> QuerySet:
    """`search` (name, body or content, case-insensitive), `channel`, `status`, `waba_id`,
    `language`, `name` (exact). `channel` and `status` take a comma list or repeats."""
    search = (params.get("search") or params.get("q") or "").strip()
    if search:
        queryset = queryset.filter(Q(name__icontains=search) | Q(content__icontains=search)
                                   | Q(components__icontains=search))
    channels = _one_of(params, "channel", TemplateChannel.values)
    if channels:
        queryset = queryset.filter(channel__in=channels)
    statuses = _one_of(params, "status", TemplateStatus.values)
    if statuses:
        queryset = queryset.filter(status__in=statuses)
    if params.get("waba_id"):
        queryset = queryset.filter(waba_id=params["waba_id"])
    if params.get("language"):
        queryset = queryset.filter(language=params["language"])
    if params.get("name"):
        queryset = queryset.filter(name=params["name"])
    return queryset


def template_summary(organization) -> dict[str, Any]:
    """Counts per channel (and status), in one grouped query."""
    by_channel: dict[str, dict[str, Any]] = {}
    by_status = dict.fromkeys(TemplateStatus.values, 0)
    total = 0
    rows = (MessageTemplate.objects.for_organization(organization)
            .values("channel", "status").annotate(n=Count("pk")).order_by())
    for row in rows:
        entry = by_channel.setdefault(row["channel"], {
            "total": 0, "by_status": dict.fromkeys(TemplateStatus.values, 0)})
        entry["total"] += row["n"]
        entry["by_status"][row["status"]] += row["n"]
        by_status[row["status"]] += row["n"]
        total += row["n"]
    return {
        "total": total,
        "by_status": by_status,
        "by_channel": {channel: by_channel[channel] for channel in sorted(by_channel)},
    }


def template_localizations(template: MessageTemplate) -> dict[str, Any]:
    """Every locale variant of the template's (channel, name) with its approval status."""
    variants = list(
        MessageTemplate.objects.for_organization(template.organization)
        .filter(channel=template.channel, name=template.name)
        .order_by("language")
        .only("id", "language", "status", "rejection_reason", "localized_from_id",
              "decided_at", "created_at", "updated_at")
    )
    by_status = dict.fromkeys(TemplateStatus.values, 0)
    for variant in variants:
        by_status[variant.status] += 1
    return {
        "template_id": template.pk,
        "name": template.name,
        "channel": template.channel,
        "source_language": template.language,
        "total": len(variants),
        "by_status": by_status,
        "localizations": [
            {
                "language": v.language,
                "template_id": v.pk,
                "status": v.status,
                "rejection_reason": v.rejection_reason,
                "localized_from": v.localized_from_id,
                "decided_at": v.decided_at,
                "created_at": v.created_at,
            }
            for v in variants
        ],
    }
