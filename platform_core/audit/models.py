"""The audit log: who did what to which object, from where and when."""

from __future__ import annotations

from django.db import models

from platform_core.ids import PublicIdField
from platform_core.tenancy.models import Organization


class AuditLogEntry(models.Model):
    # Not a TenantModel: operator actions (impersonation grants) may have no organization.
    id = PublicIdField(prefix="aud")
    organization = models.ForeignKey(
        Organization, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    actor_type = models.CharField(max_length=16)  # user, api_key, operator, system, scim
    actor_id = models.CharField(max_length=64, blank=True)
    actor_display = models.CharField(max_length=255, blank=True)
    action = models.CharField(max_length=100, db_index=True)
    target_type = models.CharField(max_length=64, blank=True)
    target_id = models.CharField(max_length=64, blank=True)
    ip_address = models.GenericIPAddressField(null=True, blank=True)
    user_agent = models.CharField(max_length=400, blank=True)
    metadata = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-id"]
        indexes = [
            models.Index(fields=["organization", "id"]),
            models.Index(fields=["target_type", "target_id"]),
        ]
        verbose_name = "audit log entry"
        verbose_name_plural = "audit log"

    def __str__(self) -> str:
        return f"{self.action} by {self.actor_display or self.actor_id}"
