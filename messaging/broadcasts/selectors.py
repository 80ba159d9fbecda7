"""Reads of broadcasts: the campaign rows of template analytics."""

from __future__ import annotations

from .models import Broadcast


def campaign_info(organization, ids: list[str]) -> dict[str, dict]:
    """`{campaign_id: {"name", "status"}}`: the resolver template analytics calls for its
    per-campaign rows (registered from the messaging app's ready())."""
    rows = (Broadcast.objects.for_organization(organization).filter(pk__in=list(ids))
            .values("id", "name", "status"))
    return {row["id"]: {"name": row["name"], "status": row["status"]} for row in rows}
