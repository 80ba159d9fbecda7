"""Periodic jobs run by `celery -A config beat`. Each app adds its entries here."""

from __future__ import annotations

BEAT_SCHEDULE: dict[str, dict] = {
    "purge-idempotency-records": {
        "task": "platform_core.tasks.purge_idempotency_records",
        "schedule": 3600.0,
    },
}
