"""The loyalty program of an organization (Document 3, 2.3).

Only the configuration is stored. Balances, tiers and traits are recomputed from the
tracked events (`platform_core.events.TrackedEvent`): redemptions and operator
adjustments are tracked events too (see `program.REDEMPTION_EVENT`), so there is no
separate ledger and resetting the program leaves the history untouched.
"""

from __future__ import annotations

from django.db import models
from django.utils import timezone

from platform_core.ids import PublicIdField
from platform_core.tenancy.models import TenantModel


class ProgramSource(models.TextChoices):
    CUSTOM = "custom"
    DEFAULT = "default"


class LoyaltyProgram(TenantModel):
    """At most one per organization; absent until the first write (then `default` again
    after a reset, with a new revision)."""

    id = PublicIdField(prefix="lyp")
    source = models.CharField(max_length=16, choices=ProgramSource.choices,
                              default=ProgramSource.CUSTOM)
    name = models.CharField(max_length=200)
    earn_rules = models.JSONField(default=list, blank=True)
    tiers = models.JSONField(default=list, blank=True)
    points_expiry_days = models.PositiveIntegerField(null=True, blank=True)
    revision_id = models.CharField(max_length=40)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["organization"], name="loyalty_program_one_per_org"),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.revision_id})"
