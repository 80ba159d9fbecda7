"""Voice IVR flows (Document 3, 4.10): drafts, published versions, bound numbers."""

from __future__ import annotations

from django.db import models
from django.utils import timezone

from platform_core.ids import PublicIdField
from platform_core.tenancy.models import TenantModel


class IvrFlow(TenantModel):
    id = PublicIdField(prefix="ivr")
    name = models.CharField(max_length=200)
    active = models.BooleanField(default=False)
    definition = models.JSONField(default=dict)  # the draft
    version = models.PositiveIntegerField(default=0)  # latest published, 0 = never
    published_at = models.DateTimeField(null=True, blank=True)
    created_by = models.CharField(max_length=64, blank=True, default="")
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-id"]
        indexes = [models.Index(fields=["organization", "id"])]

    def __str__(self) -> str:
        return f"{self.name} ({self.id})"


class IvrFlowVersion(TenantModel):
    flow = models.ForeignKey(IvrFlow, on_delete=models.CASCADE, related_name="versions")
    version = models.PositiveIntegerField()
    definition = models.JSONField()
    published_by = models.CharField(max_length=64, blank=True, default="")
    published_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["flow", "version"],
                                               name="ivr_flow_version_unique")]

    def __str__(self) -> str:
        return f"{self.flow_id} v{self.version}"


class IvrNumber(TenantModel):
    """A phone number of the organization answered by a flow."""

    flow = models.ForeignKey(IvrFlow, on_delete=models.CASCADE, related_name="numbers")
    phone_number = models.CharField(max_length=32)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["organization", "phone_number"],
                                               name="ivr_number_unique")]

    def __str__(self) -> str:
        return self.phone_number
