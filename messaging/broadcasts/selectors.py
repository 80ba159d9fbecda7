"""Reads of broadcasts: the campaign rows of template analytics."""

from __future__ import annotations

from .models import Broadcast, BroadcastStatus


def campaign_info(organization, ids: list[str]) -> dict[str, dict]:
    """`{campaign_id: {"name", "status"}}`: the resolver template analytics calls for its
    per-campaign rows (registered from the messaging app's ready())."""
    rows = (Broadcast.objects.for_organization(organization).filter(pk__in=list(ids))
            .values("id", "name", "status"))
    return {row["id"]: {"name": row["name"], "status": row["status"]} for row in rows}


def broadcast_progress(broadcast: Broadcast) -> dict:
    """`{processed, pending, percent}`: recipients processed over the snapshot (0-100, one
    decimal; a completed broadcast with no recipient is 100). The API's `progress` and the
    dashboard's bar."""
    pending = broadcast.pending
    processed = broadcast.total_recipients - pending
    if broadcast.total_recipients:
        percent = round(processed * 100 / broadcast.total_recipients, 1)
    else:
        percent = 100.0 if broadcast.status == BroadcastStatus.COMPLETED else 0.0
    return {"processed": processed, "pending": pending, "percent": percent}


def audience_options(organization) -> dict[str, list[dict]]:
    """The contact lists and saved segments a broadcast can target (the create form's
    choices), by name, at most 200 of each."""
    from contacts.models import ContactList
    from contacts.segments.models import Segment

    lists = (ContactList.objects.for_organization(organization).order_by("name", "id")
             .values("id", "name", "contact_count")[:200])
    segments = (Segment.objects.for_organization(organization).order_by("name", "id")
                .values("id", "name", "member_count")[:200])
    return {"lists": [{"id": r["id"], "name": r["name"], "count": r["contact_count"]}
                      for r in lists],
            "segments": [{"id": r["id"], "name": r["name"], "count": r["member_count"]}
                         for r in segments]}
