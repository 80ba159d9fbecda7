"""The AI budget as insights shows it (the row is `agents.usage.AIBudget`)."""

from __future__ import annotations

from typing import Any

from agents.usage.models import AIBudget

DEFAULT_ALERT_AT_PERCENT = 80


def budget_of(organization) -> dict[str, Any]:
    row = AIBudget.objects.for_organization(organization).first()
    if row is None:
        return {"monthly_cap_cents": None, "daily_cap_cents": None, "channel_thresholds": {},
                "alert_at_percent": DEFAULT_ALERT_AT_PERCENT, "currency": organization.currency,
                "updated_at": None}
    return {"monthly_cap_cents": row.monthly_cap_cents, "daily_cap_cents": row.daily_cap_cents,
            "channel_thresholds": dict(row.channel_thresholds or {}),
            "alert_at_percent": row.alert_at_percent, "currency": organization.currency,
            "updated_at": row.updated_at}
