"""Reads of the knowledge app: the staleness scorecard (Document 3, 2.2 and 4.3)."""

from __future__ import annotations

from typing import Any

from .models import KnowledgeBase
from .staleness import scorecard


def staleness(kb: KnowledgeBase, *, default_threshold_days: int = 90,
              limit: int = 1000) -> dict[str, Any]:
    """One query; see `knowledge.staleness`."""
    return scorecard(knowledge_base=kb, default_threshold_days=default_threshold_days,
                     limit=limit)
