"""Periodic insights work (beat entry `insights-refresh`, every minute)."""

from __future__ import annotations

from celery import shared_task

from . import rollup, services


@shared_task(name="insights.refresh")
def refresh() -> dict:
    """Advance the usage rollup, then check the budget alerts of organizations with caps."""
    until = rollup.refresh()
    alerts = services.check_all_budget_alerts()
    return {"rolled_until": until.isoformat() if until else None, "alerts": alerts}
