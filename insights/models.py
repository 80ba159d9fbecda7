"""Insights: the usage rollup the spend figures read, and the per-organization settings of
the insights endpoints (ROI outcome values, cost-economics rates, budget alerts sent).

The budget itself is `agents.usage.AIBudget` (the caps the metering enforces); insights
edits it through `/insights/llm-spend/budget` and records here which alerts went out.
"""

from __future__ import annotations

from django.db import models
from django.utils import timezone

from platform_core.tenancy.models import TenantModel, organization_key


class UsageRollup(TenantModel):
    """AI usage summed per UTC quarter-hour and (agent, model, channel, feature,
    conversation). Every real time zone's hour and day boundaries fall on a quarter-hour,
    so any bucket in the organization's zone is a sum of whole rollup rows; rows older than
    `RollupState.rolled_until` are read from here, newer ones from `AIUsage` itself.
    Maintained by `insights.rollup.refresh` (beat entry `insights-refresh`)."""

    organization = organization_key(db_index=False)
    bucket = models.DateTimeField()
    agent_id = models.CharField(max_length=40, blank=True, default="")
    model = models.CharField(max_length=100, blank=True, default="")
    channel = models.CharField(max_length=16, blank=True, default="")
    feature = models.CharField(max_length=40, blank=True, default="")
    conversation_id = models.CharField(max_length=40, blank=True, default="")
    cost_cents = models.BigIntegerField(default=0)
    total_tokens = models.BigIntegerField(default=0)
    calls = models.BigIntegerField(default=0)
    # Conversations whose first usage row ever is in this quarter-hour and key: summed over
    # any window it counts each conversation once (where it started).
    conversations_started = models.BigIntegerField(default=0)
    first_at = models.DateTimeField()

    class Meta:
        indexes = [
            models.Index(fields=["organization", "bucket"], name="insights_rollup_org_bucket"),
            models.Index(fields=["bucket"], name="insights_rollup_bucket"),
        ]


class UsageDay(TenantModel):
    """The quarter-hour rollup summed per local day of the organization's zone (`tz`) and
    (agent, model, channel, feature), without conversations: what a long window reads.
    `bucket` is the day's local midnight. A day is read only once it ended before the
    watermark and only while `DayRollupState.tz` is the organization's zone."""

    organization = organization_key(db_index=False)
    tz = models.CharField(max_length=64)
    day = models.DateField()
    bucket = models.DateTimeField()
    agent_id = models.CharField(max_length=40, blank=True, default="")
    model = models.CharField(max_length=100, blank=True, default="")
    channel = models.CharField(max_length=16, blank=True, default="")
    feature = models.CharField(max_length=40, blank=True, default="")
    cost_cents = models.BigIntegerField(default=0)
    total_tokens = models.BigIntegerField(default=0)
    calls = models.BigIntegerField(default=0)
    conversations_started = models.BigIntegerField(default=0)

    class Meta:
        indexes = [models.Index(fields=["organization", "day"], name="insights_day_org_day"),
                   models.Index(fields=["day"], name="insights_day_day")]


class DayRollupState(TenantModel):
    """The zone an organization's day rollup is built in (rebuilt when the zone changes)."""

    organization = organization_key(db_index=False)
    tz = models.CharField(max_length=64)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["organization"],
                                               name="insights_daystate_uniq_org")]


class RollupState(models.Model):
    """Platform-wide watermark of the rollup: usage before `rolled_until` is rolled up."""

    name = models.CharField(max_length=40, primary_key=True)
    rolled_until = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"{self.name} rolled until {self.rolled_until}"


class InsightsSettings(TenantModel):
    """One row per organization: ROI outcome values and cost-economics rates (null or
    absent = the platform default)."""

    organization = organization_key(db_index=False)
    default_outcome_value_cents = models.BigIntegerField(null=True, blank=True)
    per_rubric_value_cents = models.JSONField(default=dict, blank=True)
    cost_rates = models.JSONField(default=dict, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["organization"],
                                               name="insights_settings_uniq_org")]


class BudgetAlert(TenantModel):
    """An `ai.budget.alert` event that went out: one per organization, cap and period."""

    organization = organization_key(db_index=False)
    period = models.CharField(max_length=8)  # day | month
    period_start = models.DateField()
    cap_cents = models.BigIntegerField()
    spend_cents = models.BigIntegerField()
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["organization", "period", "period_start"],
                                               name="insights_alert_once_per_period")]
