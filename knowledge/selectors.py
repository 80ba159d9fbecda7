"""Reads of the knowledge app: the staleness scorecard (Document 3, 2.2 and 4.3)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.utils import timezone

from .models import Document, KnowledgeBase

DAY_SECONDS = 86400


def _bucket(age_seconds: float | None, threshold_days: int) -> str:
    if age_seconds is None or age_seconds >= 2 * threshold_days * DAY_SECONDS:
        return "critical"
    return "stale" if age_seconds >= threshold_days * DAY_SECONDS else "fresh"


def staleness(kb: KnowledgeBase, *, default_threshold_days: int = 90) -> dict[str, Any]:
    """Age counts from `last_verified_at`, else `updated_at`; `fresh` below the threshold,
    `stale` at or above it, `critical` at twice it or with no timestamp; a document's own
    threshold wins. One query; `attention_required` (stale and critical) oldest first."""
    now = timezone.now()
    rows = Document.objects.filter(knowledge_base=kb).values(
        "id", "name", "type", "status", "last_verified_at", "last_cited_at", "updated_at",
        "staleness_threshold_days")
    totals = {"fresh": 0, "stale": 0, "critical": 0, "documents_scanned": 0,
              "never_verified": 0}
    attention: list[tuple[float, str, dict[str, Any]]] = []
    for row in rows:
        stamp: datetime | None = row["last_verified_at"] or row["updated_at"]
        age = (now - stamp).total_seconds() if stamp else None
        threshold = row.pop("staleness_threshold_days") or default_threshold_days
        bucket = _bucket(age, threshold)
        totals[bucket] += 1
        totals["documents_scanned"] += 1
        totals["never_verified"] += row["last_verified_at"] is None
        if bucket != "fresh":
            attention.append((-(age if age is not None else float("inf")), row["id"], {
                **row, "bucket": bucket, "threshold_days": threshold,
                "age_days": int(age // DAY_SECONDS) if age is not None else None}))
    attention.sort(key=lambda item: (item[0], item[1]))
    return {"knowledge_base_id": kb.pk, "totals": totals,
            "attention_required": [item[2] for item in attention],
            "default_threshold_days": default_threshold_days, "scanned_at": now}
