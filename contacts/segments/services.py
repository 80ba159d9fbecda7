"""Writes of the segments family: saved segments, their materialized membership, click
cohorts and the refresh the beat job runs.

Membership is written by the database itself: `INSERT ... SELECT` from the compiled
filter (and a `DELETE ... NOT EXISTS` of the rows that stopped matching on a refresh), so
materializing a segment of 100,000 contacts moves no row through Python.
"""

from __future__ import annotations

import logging
from datetime import timedelta
from typing import Any

from django.db import connection, transaction
from django.db.models import Exists, F, OuterRef, Q, QuerySet
from django.utils import timezone

from contacts.models import Contact
from messaging.links.models import LinkClick, ShortLink
from platform_core.audit.services import audit_record
from platform_core.errors import APIError, validation_error
from platform_core.identity.principal import Principal

from . import filters as segment_filters
from .models import Segment, SegmentKind, SegmentMembership

logger = logging.getLogger("contacts.segments")

CLICK_WINDOW_DEFAULT = 30
CLICK_WINDOW_MAX = 365


def _materialize(segment: Segment, matching: QuerySet) -> int:
    """Make the segment's membership equal to `matching` (a Contact queryset) and answer
    the member count: three statements, whatever the size."""
    table = SegmentMembership._meta.db_table
    select_sql, params = matching.order_by().values("id").query.sql_with_params()
    now = timezone.now()
    with connection.cursor() as cursor:
        cursor.execute(
            f"DELETE FROM {table} WHERE segment_id = %s AND NOT EXISTS "  # noqa: S608
            f"(SELECT 1 FROM ({select_sql}) AS matched WHERE matched.id = {table}.contact_id)",
            [segment.pk, *params],
        )
        cursor.execute(
            f"INSERT INTO {table} (organization_id, segment_id, contact_id, added_at) "  # noqa: S608
            f"SELECT %s, %s, matched.id, %s FROM ({select_sql}) AS matched "
            # `WHERE 1 = 1`: SQLite needs a WHERE before an upsert clause after SELECT.
            "WHERE 1 = 1 ON CONFLICT (segment_id, contact_id) DO NOTHING",
            [segment.organization_id, segment.pk, now, *params],
        )
        cursor.execute(f"SELECT COUNT(*) FROM {table} WHERE segment_id = %s",  # noqa: S608
                       [segment.pk])
        count = cursor.fetchone()[0]
    segment.member_count = count
    segment.refreshed_at = now
    Segment.objects.for_organization(segment.organization).filter(pk=segment.pk).update(
        member_count=count, refreshed_at=now
    )
    return count


def _matching_filter(segment: Segment) -> QuerySet:
    return segment_filters.contacts_matching(segment.filters, organization=segment.organization)


def segment_create(
    *,
    principal: Principal,
    name: str,
    filters: dict[str, Any],
    description: str | None = None,
    request=None,
) -> Segment:
    """A rule-defined segment, its membership materialized before it is answered."""
    organization = principal.organization
    segment_filters.parse_filters(filters)
    with transaction.atomic():
        segment = Segment.objects.for_organization(organization).create(
            organization=organization,
            name=name,
            description=description,
            kind=SegmentKind.FILTER,
            filters=filters,
            created_by=principal.actor_id,
        )
        _materialize(segment, _matching_filter(segment))
        audit_record(action="segment.created", principal=principal, target=segment,
                     request=request, metadata={"member_count": segment.member_count})
    return segment


_UNSET: Any = object()


def segment_update(
    *,
    principal: Principal,
    segment: Segment,
    name: str = _UNSET,
    description: str | None = _UNSET,
    filters: dict[str, Any] = _UNSET,
    request=None,
) -> Segment:
    """Rename, describe or re-filter; new filters re-materialize the membership."""
    changed: list[str] = []
    if filters is not _UNSET:
        if segment.kind != SegmentKind.FILTER:
            raise validation_error(
                "filters", "A click cohort has no filter: its membership is fixed.")
        segment_filters.parse_filters(filters)
    with transaction.atomic():
        segment = Segment.objects.for_organization(principal.organization).select_for_update(
        ).get(pk=segment.pk)
        for field, value in (("name", name), ("description", description),
                             ("filters", filters)):
            if value is not _UNSET and getattr(segment, field) != value:
                setattr(segment, field, value)
                changed.append(field)
        if changed:
            segment.save(update_fields=[*changed, "updated_at"])
        if "filters" in changed:
            _materialize(segment, _matching_filter(segment))
        if changed:
            audit_record(action="segment.updated", principal=principal, target=segment,
                         request=request, metadata={"changed": changed})
    return segment


def segment_delete(*, principal: Principal, segment: Segment, request=None) -> None:
    with transaction.atomic():
        audit_record(action="segment.deleted", principal=principal, target=segment,
                     request=request, metadata={"name": segment.name})
        SegmentMembership.objects.for_organization(principal.organization).filter(
            segment_id=segment.pk
        ).delete()
        segment.delete()


def segment_refresh(*, segment_id: str) -> int | None:
    """Re-evaluate one rule-defined segment (the beat job's unit of work). A click cohort,
    a deleted segment or filters that no longer validate are left alone (None)."""
    segment = (Segment.objects.dangerously_unscoped().select_related("organization")
               .filter(pk=segment_id).first())
    if segment is None or segment.kind != SegmentKind.FILTER:
        return None
    with transaction.atomic():
        locked = (Segment.objects.for_organization(segment.organization).select_for_update()
                  .filter(pk=segment_id).first())
        if locked is None:
            return None
        locked.organization = segment.organization
        try:
            matching = _matching_filter(locked)
        except APIError:
            # A tree stored before a stricter rule: keep the last membership, and move the
            # segment to the back of the queue so it does not starve the others.
            logger.warning("segment %s has filters that no longer validate", segment_id)
            Segment.objects.for_organization(segment.organization).filter(pk=segment_id).update(
                refreshed_at=timezone.now())
            return None
        return _materialize(locked, matching)


def stale_segment_ids(*, older_than: timedelta, limit: int) -> list[str]:
    """Rule-defined segments not refreshed for `older_than`, stalest first (every tenant)."""
    cutoff = timezone.now() - older_than
    return list(
        Segment.objects.dangerously_unscoped()
        .filter(kind=SegmentKind.FILTER)
        .filter(Q(refreshed_at__lt=cutoff) | Q(refreshed_at__isnull=True))
        .order_by(F("refreshed_at").asc(nulls_first=True))
        .values_list("pk", flat=True)[:limit]
    )


def segment_create_from_clicks(
    *,
    principal: Principal,
    link_id: str | None = None,
    campaign_id: str | None = None,
    window_days: int = CLICK_WINDOW_DEFAULT,
    name: str | None = None,
    description: str | None = None,
    request=None,
) -> Segment:
    """A static cohort of the distinct contacts who clicked the link and/or a link of the
    campaign in the last `window_days`; it is never refreshed."""

    organization = principal.organization
    if not link_id and not campaign_id:
        raise APIError(
            "VALIDATION_ERROR", "Give link_id, campaign_id or both.", status=422,
            details={"issues": [
                {"field": "link_id", "message": "Give link_id, campaign_id or both."},
                {"field": "campaign_id", "message": "Give link_id, campaign_id or both."},
            ]},
        )
    link = None
    if link_id:
        link = ShortLink.objects.for_organization(organization).filter(pk=link_id).first()
        if link is None:
            raise validation_error("link_id", "No link with this id.")
    now = timezone.now()
    since = now - timedelta(days=window_days)
    clicks = LinkClick.objects.for_organization(organization).filter(
        contact_id=OuterRef("pk"), clicked_at__gte=since, clicked_at__lte=now
    )
    if link_id:
        clicks = clicks.filter(link_id=link_id)
    if campaign_id:
        clicks = clicks.filter(campaign_id=campaign_id)
    clickers = Contact.objects.for_organization(organization).filter(Exists(clicks))
    if not name:
        target = f"link {link.code}" if link else f"campaign {campaign_id}"
        name = f"Clicked {target} in the last {window_days} days"[:255]
    source = {"link_id": link_id or None, "campaign_id": campaign_id or None,
              "window_days": window_days, "clicked_since": since.isoformat(),
              "clicked_until": now.isoformat()}
    with transaction.atomic():
        segment = Segment.objects.for_organization(organization).create(
            organization=organization,
            name=name,
            description=description,
            kind=SegmentKind.CLICKS,
            filters=None,
            source=source,
            created_by=principal.actor_id,
        )
        _materialize(segment, clickers)
        audit_record(action="segment.created", principal=principal, target=segment,
                     request=request,
                     metadata={"member_count": segment.member_count, "kind": "clicks"})
    return segment
