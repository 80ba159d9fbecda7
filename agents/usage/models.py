"""Usage rows and the AI budget of an organization (the insights issue reads both)."""

from __future__ import annotations

from django.db import models
from django.utils import timezone

from platform_core.ids import PublicIdField
from platform_core.tenancy.models import TenantModel


class AIUsage(TenantModel):
    """One model call: what it used and what it cost. Written by `agents.usage.metering`."""

    id = PublicIdField(prefix="aiu")
    agent_id = models.CharField(max_length=40, blank=True, default="")
    conversation_id = models.CharField(max_length=40, blank=True, default="")
    channel = models.CharField(max_length=16, blank=True, default="")
    feature = models.CharField(max_length=40, help_text="chat.completions, embeddings, "
                               "analyze, translate, ...")
    engine = models.CharField(max_length=8, help_text="local or live")
    model = models.CharField(max_length=100)
    prompt_tokens = models.PositiveIntegerField(default=0)
    completion_tokens = models.PositiveIntegerField(default=0)
    total_tokens = models.PositiveIntegerField(default=0)
    cost_cents = models.BigIntegerField(default=0)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-id"]
        indexes = [
            models.Index(fields=["organization", "created_at"], name="agents_aiu_org_created"),
            models.Index(fields=["organization", "agent_id", "created_at"],
                         name="agents_aiu_org_agent"),
            models.Index(fields=["organization", "conversation_id", "created_at"],
                         name="agents_aiu_org_conversation"),
            models.Index(fields=["organization", "feature", "created_at"],
                         name="agents_aiu_org_feature"),
        ]


class AISpendDay(TenantModel):
    """The wallet's AI ledger per UTC day: what the caps are checked against (one row read
    for the day, at most 31 for the month) instead of summing usage rows on every call."""

    day = models.DateField()
    cost_cents = models.BigIntegerField(default=0)
    total_tokens = models.BigIntegerField(default=0)
    calls = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["organization", "day"],
                                               name="agents_spend_day_uniq")]


class AIBudget(TenantModel):
    """Caps on the organization's AI spend (null = no cap). Edited by operators in the
    admin and, with the insights issue, through `/insights/llm-spend/budget`."""

    daily_cap_cents = models.BigIntegerField(null=True, blank=True)
    monthly_cap_cents = models.BigIntegerField(null=True, blank=True)
    channel_thresholds = models.JSONField(default=dict, blank=True)
    alert_at_percent = models.PositiveSmallIntegerField(default=80)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["organization"],
                                               name="agents_budget_uniq_org")]
