"""Reads of the knowledge app: bases, connector kinds and the staleness scorecard (Document 3,
2.2 and 4.3). Every read goes through the tenant-scoped managers."""

from __future__ import annotations

from typing import Any

from .connectors.models import Connector
from .models import KnowledgeBase
from .staleness import scorecard


def staleness(kb: KnowledgeBase, *, default_threshold_days: int = 90,
              limit: int = 1000) -> dict[str, Any]:
    """One query; see `knowledge.staleness`."""
    return scorecard(knowledge_base=kb, default_threshold_days=default_threshold_days,
                     limit=limit)


def knowledge_base(pk: str) -> KnowledgeBase | None:
    """The current organization's base `pk`, or None."""
    return KnowledgeBase.objects.filter(pk=pk).first()


def connected_kinds() -> set[str]:
    """The connector kinds the current organization has at least one connector of."""
    return set(Connector.objects.order_by().values_list("kind", flat=True).distinct())
