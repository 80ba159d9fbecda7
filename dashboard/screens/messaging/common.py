"""What the messaging screens share: status badges, the filter choices, form reading."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.http import QueryDict

from messaging.models import FAILURE_STATUSES

# Badge class per status of a message, a broadcast or a template.
BADGES = {
    "delivered": "ok", "received": "ok", "completed": "ok", "approved": "ok", "verified": "ok",
    "queued": "warn", "scheduled": "warn", "running": "warn", "pending": "warn",
    "paused": "warn",
    "canceled": "", "disabled": "", "sent": "",
    "rejected": "bad", "failed": "bad", **dict.fromkeys(FAILURE_STATUSES, "bad"),
}


def with_badges(rows: Iterable[Any]) -> list[Any]:
    """Each row gets `badge`, its status's badge class (templates cannot index a dict)."""
    rows = list(rows)
    for row in rows:
        row.badge = BADGES.get(row.status, "")
    return rows


def text(data: QueryDict, name: str) -> str | None:
    """A posted field, stripped; None when absent or blank (the services' 'not given')."""
    value = (data.get(name) or "").strip()
    return value or None
