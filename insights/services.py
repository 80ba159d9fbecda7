"""Writes of insights (all on the primary): the budget, the ROI outcome values and the
cost-economics rates, each a read-merge-write of the stored row in one transaction with
its audit row; and the budget alert, emitted once per organization, cap and period."""

from __future__ import annotations

import logging
from datetime import datetime
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone

from agents.usage.models import AIBudget
from platform_core.audit.services import audit_record
from platform_core.errors import APIError
from platform_core.events.bus import emit
from platform_core.identity.principal import Principal

from .models import BudgetAlert, InsightsSettings
from .selectors.budget import budget_of

logger = logging.getLogger("insights")

MAX_CENTS = 100_000_000_000
MAX_RUBRICS = 500
MAX_KEY = 64
COST_RATE_FIELDS = ("sms_per_message_cents", "whatsapp_per_message_cents",
                    "voice_per_minute_cents", "video_per_minute_cents",
                    "ai_per_1000_tokens_cents")
BUDGET_ALERT_EVENT = "ai.budget.alert"


def _cents(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_CENTS


def _key(value: Any) -> bool:
    return isinstance(value, str) and 1 <= len(value) <= MAX_KEY


# --- budget ------------------------------------------------------------------------------


def budget_update(*, principal: Principal, body: dict[str, Any], request=None
                  ) -> dict[str, Any]:
    """Merge `body` into the budget. Values out of range or of the wrong type are dropped
    (named in `dropped`), as Document 3 says; `channel_thresholds` merges per channel and
    a null threshold removes that channel."""
    organization = principal.organization
    dropped: list[str] = []
    with transaction.atomic():
        row, _ = AIBudget.objects.for_organization(organization).select_for_update(
        ).get_or_create(organization=organization)
        for field in ("monthly_cap_cents", "daily_cap_cents"):
            if field in body:
                value = body[field]
                if value is None or _cents(value):
                    setattr(row, field, value)
                else:
                    dropped.append(field)
        if "alert_at_percent" in body:
            value = body["alert_at_percent"]
            if isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= 100:
                row.alert_at_percent = value
            else:
                dropped.append("alert_at_percent")
        if "channel_thresholds" in body:
            given = body["channel_thresholds"]
            if isinstance(given, dict):
                thresholds = dict(row.channel_thresholds or {})
                for channel, cents in given.items():
                    if not _key(channel):
                        dropped.append(f"channel_thresholds.{str(channel)[:MAX_KEY]}")
                    elif cents is None:
                        thresholds.pop(channel, None)
                    elif _cents(cents):
                        thresholds[channel] = cents
                    else:
                        dropped.append(f"channel_thresholds.{channel}")
                row.channel_thresholds = thresholds
            else:
                dropped.append("channel_thresholds")
        known = {"monthly_cap_cents", "daily_cap_cents", "alert_at_percent",
                 "channel_thresholds"}
        dropped += sorted(k for k in body if k not in known)
        row.save()
        audit_record(action="insights.budget_updated", principal=principal, target=row,
                     request=request, metadata={"dropped": dropped, "fields": sorted(
                         k for k in body if k in known)})
    check_budget_alerts(organization)
    return {**budget_of(organization), "dropped": dropped}


def check_budget_alerts(organization, now: datetime | None = None) -> list[str]:
    """Emit `ai.budget.alert` for each cap whose spend this period reached
    `alert_at_percent` of it, once per period (day and month, in the organization's
    zone). Answers the periods alerted now."""
    from .selectors.spend import overview

    budget = budget_of(organization)
    if budget["daily_cap_cents"] is None and budget["monthly_cap_cents"] is None:
        return []
    now = now or timezone.now()
    figures = overview(organization, now=now)
    local_today = datetime.fromisoformat(figures["as_of"]).date()
    alerted = []
    for period, cap, spent, start in (
            ("day", budget["daily_cap_cents"], figures["today"]["spend_cents"], local_today),
            ("month", budget["monthly_cap_cents"], figures["month_to_date"]["spend_cents"],
             local_today.replace(day=1))):
        if not cap or spent * 100 < cap * budget["alert_at_percent"]:
            continue
        try:
            with transaction.atomic():
                BudgetAlert.objects.create(organization=organization, period=period,
                                           period_start=start, cap_cents=cap,
                                           spend_cents=spent, created_at=now)
                emit(organization=organization, type=BUDGET_ALERT_EVENT, data={
                    "period": period, "period_start": start.isoformat(),
                    "cap_cents": cap, "spend_cents": spent,
                    "alert_at_percent": budget["alert_at_percent"],
                    "percent": round(spent * 100 / cap, 1),
                    "currency": organization.currency, "timezone": figures["timezone"]})
        except IntegrityError:
            continue  # already alerted this period
        alerted.append(period)
    return alerted


def check_all_budget_alerts() -> int:
    """The periodic sweep: every organization with a cap (answers alerts emitted)."""
    from platform_core.tenancy.context import tenant_context
    from platform_core.tenancy.models import Organization

    org_ids = list(AIBudget.objects.dangerously_unscoped().filter(
        organization__is_active=True).exclude(daily_cap_cents__isnull=True,
                                              monthly_cap_cents__isnull=True)
        .values_list("organization_id", flat=True))
    sent = 0
    for organization in Organization.objects.filter(pk__in=org_ids):
        with tenant_context(organization):
            try:
                sent += len(check_budget_alerts(organization))
            except Exception:  # one organization's failure never stops the sweep
                logger.exception("budget alert check failed for %s", organization.pk)
    return sent


# --- settings: ROI outcome values and cost rates ----------------------------------------


def _settings_row(organization) -> InsightsSettings:
    row, _ = InsightsSettings.objects.for_organization(organization).select_for_update(
    ).get_or_create(organization=organization)
    return row


def _invalid(issues: list[dict[str, str]]) -> APIError:
    return APIError("VALIDATION_ERROR", issues[0]["message"] if len(issues) == 1 else
                    "The request is not valid.", status=422, details={"issues": issues})


def roi_config_update(*, principal: Principal, body: dict[str, Any], request=None
                      ) -> InsightsSettings:
    """Merge `default_outcome_value_cents` and `per_rubric_value_cents` (merged per rubric;
    null removes one) into the ROI configuration; at most 500 rubric values."""
    issues: list[dict[str, str]] = []
    known = {"default_outcome_value_cents", "per_rubric_value_cents"}
    for field in sorted(set(body) - known):
        issues.append({"field": field, "message": f"Unknown field `{field}`."})
    if "default_outcome_value_cents" in body and not (
            body["default_outcome_value_cents"] is None
            or _cents(body["default_outcome_value_cents"])):
        issues.append({"field": "default_outcome_value_cents",
                       "message": f"An integer of cents from 0 to {MAX_CENTS:,}, or null."})
    rubrics = body.get("per_rubric_value_cents")
    if "per_rubric_value_cents" in body:
        if not isinstance(rubrics, dict):
            issues.append({"field": "per_rubric_value_cents",
                           "message": "An object of cents by rubric id."})
        else:
            for rubric, cents in rubrics.items():
                if not _key(rubric):
                    issues.append({"field": "per_rubric_value_cents",
                                   "message": f"Rubric ids are 1-{MAX_KEY} characters."})
                elif cents is not None and not _cents(cents):
                    issues.append({"field": f"per_rubric_value_cents.{rubric}",
                                   "message": f"An integer of cents from 0 to {MAX_CENTS:,}, "
                                              "or null to remove it."})
    if issues:
        raise _invalid(issues)
    organization = principal.organization
    with transaction.atomic():
        row = _settings_row(organization)
        if "default_outcome_value_cents" in body:
            row.default_outcome_value_cents = body["default_outcome_value_cents"]
        if isinstance(rubrics, dict):
            merged = dict(row.per_rubric_value_cents or {})
            for rubric, cents in rubrics.items():
                if cents is None:
                    merged.pop(rubric, None)
                else:
                    merged[rubric] = cents
            if len(merged) > MAX_RUBRICS:
                raise _invalid([{"field": "per_rubric_value_cents",
                                 "message": f"At most {MAX_RUBRICS} rubric values."}])
            row.per_rubric_value_cents = merged
        row.save()
        audit_record(action="insights.roi_config_updated", principal=principal, target=row,
                     request=request, metadata={"fields": sorted(body)})
    return row


def cost_config_update(*, principal: Principal, body: dict[str, Any], request=None
                       ) -> InsightsSettings:
    """Merge rates into the cost-economics configuration; an explicit null resets a rate
    to the platform default."""
    issues = []
    for field, value in body.items():
        if field not in COST_RATE_FIELDS:
            issues.append({"field": field, "message": f"Unknown rate `{field}`; rates are "
                                                      f"{', '.join(COST_RATE_FIELDS)}."})
        elif value is not None and not _cents(value):
            issues.append({"field": field, "message": f"An integer of cents from 0 to "
                                                      f"{MAX_CENTS:,}, or null for the default."})
    if issues:
        raise _invalid(issues)
    organization = principal.organization
    with transaction.atomic():
        row = _settings_row(organization)
        rates = dict(row.cost_rates or {})
        for field, value in body.items():
            if value is None:
                rates.pop(field, None)
            else:
                rates[field] = value
        row.cost_rates = rates
        row.save()
        audit_record(action="insights.cost_config_updated", principal=principal, target=row,
                     request=request, metadata={"fields": sorted(body)})
    return row
