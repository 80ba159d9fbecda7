"""Small helpers shared by the insights selectors: rates, percentages, agent names."""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from agents.agent_models import Agent


def percent(part: int | float | None, whole: int | float | None) -> float | None:
    """`part / whole` as a percentage with one decimal (half up); None when `whole` is 0
    or unknown (not computable, not zero)."""
    if part is None or not whole:
        return None
    value = Decimal(part) * 100 / Decimal(whole)
    return float(value.quantize(Decimal("0.1"), rounding=ROUND_HALF_UP))


def ratio(part: int | float, whole: int | float, places: str = "0.01") -> float | None:
    if not whole:
        return None
    return float((Decimal(part) / Decimal(whole)).quantize(Decimal(places),
                                                            rounding=ROUND_HALF_UP))


def round_half_up(value: Decimal | float) -> int:
    return int(Decimal(value).quantize(Decimal("1"), rounding=ROUND_HALF_UP))


def agents_by_id(organization, ids: list[str] | set[str]) -> dict[str, dict[str, Any]]:
    """`{id: {name, model}}` of the organization's agents among `ids` (one query)."""
    wanted = [i for i in ids if i]
    if not wanted:
        return {}
    rows = (Agent.objects.for_organization(organization).filter(pk__in=wanted)
            .values_list("id", "name", "model"))
    return {pk: {"name": name, "model": model} for pk, name, model in rows}


def margin(revenue: int, cost: int) -> tuple[int, float | None]:
    """(margin_cents, margin_percent): margin over revenue; the percent is None at zero
    revenue."""
    value = revenue - cost
    return value, percent(value, revenue) if revenue else None
