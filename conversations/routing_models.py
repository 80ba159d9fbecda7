"""Routing agents: members who take conversations (skills, capacity, availability).

`active_count` is the agent's load (conversations offered to or held by the agent, open),
maintained by the services where it changes (offer, decline, expiry, assign, close), so a
routing decision reads one row per agent instead of counting conversations.
"""

from __future__ import annotations

from django.db import models
from django.utils import timezone

from platform_core.ids import PublicIdField
from platform_core.tenancy.models import TenantModel


class Availability(models.TextChoices):
    AVAILABLE = "available"
    BUSY = "busy"
    OFFLINE = "offline"


class RoutingAgent(TenantModel):
    id = PublicIdField(prefix="ragt")
    user_id = models.CharField(max_length=40, help_text="The member (`usr_`).")
    skills = models.JSONField(default=list, blank=True)
    capacity = models.PositiveIntegerField(default=3)
    availability = models.CharField(max_length=16, choices=Availability.choices,
                                    default=Availability.AVAILABLE)
    active_count = models.IntegerField(default=0)
    # Longest idle first: the agent whose last offer or assignment is oldest.
    last_assigned_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-id"]
        constraints = [models.UniqueConstraint(fields=["organization", "user_id"],
                                               name="routing_agent_one_per_member")]
        indexes = [models.Index(fields=["organization", "id"], name="routing_agent_org_id"),
                   models.Index(fields=["organization", "availability"],
                                name="routing_agent_org_avail")]

    def __str__(self) -> str:
        return f"{self.user_id} ({self.active_count}/{self.capacity})"
