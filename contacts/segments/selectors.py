"""Reads of the segments family: member pages and the rows of a CSV export."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from django.db.models import F, QuerySet

from contacts.models import Contact

from .masking import mask_email, mask_phone
from .models import Segment

EXPORT_MAX_ROWS = 50_000
EXPORT_CHUNK = 2000
EXPORT_HEADER = ["id", "first_name", "last_name", "phone", "email", "tags", "created_at"]


def segment_members(segment: Segment) -> QuerySet:
    """The segment's contacts with their `added_at`, newest contact first (keyset on id)."""
    return (
        Contact.objects.for_organization(segment.organization)
        .filter(segment_memberships__segment_id=segment.pk)
        .annotate(added_at=F("segment_memberships__added_at"))
    )


def capped_count(queryset: QuerySet, cap: int) -> int:
    """How many rows `queryset` has, counting no further than `cap` + 1 (one statement)."""
    return queryset.order_by().values("pk")[: cap + 1].count()


def export_rows(queryset: QuerySet, *, limit: int, reveal: bool) -> Iterator[list[Any]]:
    """CSV rows of up to `limit` contacts in id order, streamed 2,000 at a time from a
    server-side cursor; phone and email masked unless `reveal`."""
    rows = (
        queryset.order_by("id")
        .values_list("id", "first_name", "last_name", "phone", "email", "tags", "created_at")
        [:limit]
    )
    for cid, first, last, phone, email, tags, created in rows.iterator(chunk_size=EXPORT_CHUNK):
        if not reveal:
            phone, email = mask_phone(phone), mask_email(email)
        yield [cid, first, last, phone, email, ";".join(tags or []), created.isoformat()]
