"""Short tracked links and the clicks on them.

Messaging rewrites the links of an outgoing message into `ShortLink`s and records a
`LinkClick` when one is followed (the public redirect route arrives with the messaging
issue); segments read the clicks (`POST /api/v1/segments/from-clicks`) and the
engagement-based suggestions. The ids a link carries (`message_id`, `campaign_id`,
`contact_id`) are plain strings so a link outlives the rows it was minted for.
"""

from __future__ import annotations

from django.db import models
from django.utils import timezone

from platform_core.ids import PublicIdField
from platform_core.tenancy.models import TenantModel


class ShortLink(TenantModel):
    id = PublicIdField(prefix="lnk")
    # Globally unique: the public redirect `/l/<code>` carries no tenant.
    code = models.CharField(max_length=32, unique=True)
    target_url = models.URLField(max_length=2000)
    message_id = models.CharField(max_length=40, null=True, blank=True)
    campaign_id = models.CharField(max_length=64, null=True, blank=True)
    contact_id = models.CharField(max_length=40, null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-id"]
        indexes = [
            models.Index(fields=["organization", "id"], name="links_lnk_org_id"),
            models.Index(fields=["organization", "campaign_id"], name="links_lnk_org_campaign"),
            models.Index(fields=["organization", "message_id"], name="links_lnk_org_message"),
        ]

    def __str__(self) -> str:
        return f"{self.code} -> {self.target_url}"


class LinkClick(TenantModel):
    """One followed short link. The ids are copied from the link at click time (a link
    minted for one recipient names its contact), so cohort queries never join links."""

    link = models.ForeignKey(ShortLink, on_delete=models.CASCADE, related_name="clicks")
    contact_id = models.CharField(max_length=40, null=True, blank=True)
    message_id = models.CharField(max_length=40, null=True, blank=True)
    campaign_id = models.CharField(max_length=64, null=True, blank=True)
    clicked_at = models.DateTimeField(default=timezone.now)
    user_agent = models.CharField(max_length=400, blank=True, default="")
    ip = models.GenericIPAddressField(null=True, blank=True)

    class Meta:
        indexes = [
            models.Index(fields=["organization", "link", "clicked_at"],
                         name="links_clk_org_link_at"),
            models.Index(fields=["organization", "campaign_id", "clicked_at"],
                         name="links_clk_org_campaign_at"),
            # Engagement reads ("who clicked anything lately") scan by time alone.
            models.Index(fields=["organization", "clicked_at"], name="links_clk_org_at"),
        ]

    def __str__(self) -> str:
        return f"click on {self.link_id} at {self.clicked_at:%Y-%m-%d %H:%M}"
