"""Reads of the events family for screens: the recent-event feed, as GET /api/v1/events
reads it (newest first, degrading open to an empty page when the store is down)."""

from __future__ import annotations

import logging
from collections.abc import Collection
from typing import Any

from .feed import FeedUnavailable, get_feed

logger = logging.getLogger("platform_core.events")


def recent_events(organization_id: str, *, limit: int = 25,
                  types: Collection[str] = ()) -> list[dict[str, Any]]:
    """The newest event envelopes of the organization's replay window."""
    try:
        entries, _has_more = get_feed().page(organization_id, before=None, limit=limit,
                                             types=frozenset(types))
    except FeedUnavailable as exc:
        logger.warning("event feed unavailable, showing no recent events: %s", exc)
        return []
    return [entry.envelope for entry in entries]
