"""Metering: the budget check before a model call and the usage row after it.

    with metered(organization, feature="analyze", engine=engine, model=model,
                 estimate_prompt_tokens=n, estimate_completion_tokens=m,
                 conversation_id=..., agent_id=..., channel=...) as meter:
        result = engine.chat(...)
        meter.record(model=result.model, prompt_tokens=..., completion_tokens=...)

`check_budget` refuses (402 AI_BUDGET_EXCEEDED) a call whose estimated cost would take the
day's or the month's spend past its cap, before the model is called. `record` writes the
AIUsage row and adds the cost to the day's AISpendDay ledger in one transaction.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import F, Sum
from django.utils import timezone

from platform_core.errors import APIError
from platform_core.tenancy.context import tenant_context
from platform_core.tenancy.models import Organization

from .models import AIBudget, AISpendDay, AIUsage
from .pricing import price_for


@dataclass(frozen=True)
class Caps:
    daily_cents: int | None
    monthly_cents: int | None


def caps_for(organization: Organization) -> Caps:
    budget = AIBudget.objects.for_organization(organization).first()
    default_daily = getattr(settings, "AI_DAILY_CAP_CENTS", None)
    default_monthly = getattr(settings, "AI_MONTHLY_CAP_CENTS", None)
    if budget is None:
        return Caps(default_daily, default_monthly)
    return Caps(budget.daily_cap_cents, budget.monthly_cap_cents)


def _ledger(organization: Organization):
    return AISpendDay.objects.for_organization(organization)


def spend_cents(organization: Organization, today: date | None = None) -> tuple[int, int]:
    """(today's spend, this month's spend) in cents, UTC days."""
    today = today or timezone.now().date()
    rows = _ledger(organization).filter(day__gte=today.replace(day=1), day__lte=today)
    month = rows.aggregate(total=Sum("cost_cents"))["total"] or 0
    day = rows.filter(day=today).values_list("cost_cents", flat=True).first() or 0
    return day, month


def check_budget(organization: Organization, estimate_cents: int) -> None:
    caps = caps_for(organization)
    if caps.daily_cents is None and caps.monthly_cents is None:
        return
    day, month = spend_cents(organization)
    for name, cap, spent in (("daily", caps.daily_cents, day),
                             ("monthly", caps.monthly_cents, month)):
        if cap is not None and spent + estimate_cents > cap:
            raise APIError("AI_BUDGET_EXCEEDED", details={
                "cap": name, "cap_cents": cap, "spent_cents": spent,
                "estimated_cost_cents": estimate_cents})


def record(organization: Organization, *, feature: str, engine: str, model: str,
           prompt_tokens: int, completion_tokens: int, agent_id: str = "",
           conversation_id: str = "", channel: str = "") -> AIUsage:
    cost = price_for(model).cost_cents(prompt_tokens, completion_tokens)
    now = timezone.now()
    total = prompt_tokens + completion_tokens
    # A streamed answer is metered after the view returned: set the tenant scope here.
    with tenant_context(organization), transaction.atomic():
        usage = AIUsage.objects.create(
            organization=organization, feature=feature, engine=engine, model=model[:100],
            prompt_tokens=prompt_tokens, completion_tokens=completion_tokens,
            total_tokens=total, cost_cents=cost, agent_id=agent_id or "",
            conversation_id=conversation_id or "", channel=channel or "", created_at=now)
        updated = _ledger(organization).filter(day=now.date()).update(
            cost_cents=F("cost_cents") + cost, total_tokens=F("total_tokens") + total,
            calls=F("calls") + 1)
        if not updated:
            try:
                with transaction.atomic():
                    AISpendDay.objects.create(organization=organization, day=now.date(),
                                              cost_cents=cost, total_tokens=total, calls=1)
            except IntegrityError:  # another call created the day's row first
                _ledger(organization).filter(day=now.date()).update(
                    cost_cents=F("cost_cents") + cost, total_tokens=F("total_tokens") + total,
                    calls=F("calls") + 1)
    return usage


@dataclass
class Meter:
    organization: Organization
    feature: str
    engine: str
    agent_id: str = ""
    conversation_id: str = ""
    channel: str = ""
    usage: AIUsage | None = None

    def record(self, *, model: str, prompt_tokens: int, completion_tokens: int) -> AIUsage:
        self.usage = record(self.organization, feature=self.feature, engine=self.engine,
                            model=model, prompt_tokens=prompt_tokens,
                            completion_tokens=completion_tokens, agent_id=self.agent_id,
                            conversation_id=self.conversation_id, channel=self.channel)
        return self.usage


def start(organization: Organization, *, feature: str, engine: str, model: str,
          estimate_prompt_tokens: int, estimate_completion_tokens: int = 0,
          agent_id: str = "", conversation_id: str = "", channel: str = "") -> Meter:
    """Check the budget for the estimated call and answer the meter to record it with."""
    estimate = price_for(model).cost_cents(estimate_prompt_tokens, estimate_completion_tokens)
    check_budget(organization, estimate)
    return Meter(organization=organization, feature=feature, engine=engine,
                 agent_id=agent_id, conversation_id=conversation_id, channel=channel)
