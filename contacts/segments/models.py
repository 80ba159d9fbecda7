"""Saved segments and their materialized membership.

A segment is either rule-defined (`kind="filter"`: a filter tree, re-evaluated at create
time, on a change of its filters and by the beat job) or a click cohort
(`kind="clicks"`: the distinct clickers of a link or campaign at one moment, never
refreshed). `SegmentMembership` holds the members, filled in one `INSERT ... SELECT` from
the compiled filter, so member lists and exports read an indexed table.
"""

from __future__ import annotations

from django.db import models
from django.utils import timezone

from platform_core.ids import PublicIdField
from platform_core.tenancy.models import TenantModel


class SegmentKind(models.TextChoices):
    FILTER = "filter"
    CLICKS = "clicks"


class Segment(TenantModel):
    id = PublicIdField(prefix="seg")
    name = models.CharField(max_length=255)
    description = models.CharField(max_length=1000, null=True, blank=True)
    kind = models.CharField(max_length=16, choices=SegmentKind.choices,
                            default=SegmentKind.FILTER)
    # The filter tree of a rule-defined segment; null for a click cohort.
    filters = models.JSONField(null=True, blank=True)
    # What a click cohort was drawn from: link_id, campaign_id, window_days, clicked_since.
    source = models.JSONField(default=dict, blank=True)
    member_count = models.PositiveIntegerField(default=0)
    refreshed_at = models.DateTimeField(null=True, blank=True)
    created_by = models.CharField(max_length=64, blank=True, default="")
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-id"]
        indexes = [
            models.Index(fields=["organization", "id"], name="segments_seg_org_id"),
            # The refresh job's scan: rule-defined segments, stalest first.
            models.Index(fields=["kind", "refreshed_at"], name="segments_seg_kind_refreshed"),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.pk})"

    @property
    def auto_refresh(self) -> bool:
        return self.kind == SegmentKind.FILTER


class SegmentMembership(TenantModel):
    segment = models.ForeignKey(Segment, on_delete=models.CASCADE, related_name="memberships")
    contact = models.ForeignKey(
        "contacts.Contact", on_delete=models.CASCADE, related_name="segment_memberships"
    )
    added_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            # Also the index member pages walk: (segment, contact) in contact-id order.
            models.UniqueConstraint(fields=["segment", "contact"],
                                    name="segments_smb_uniq_segment_contact"),
        ]

    def __str__(self) -> str:
        return f"{self.contact_id} in {self.segment_id}"
