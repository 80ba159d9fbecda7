"""The program configuration as the computation and the API see it.

Earn rules (Document 3, 2.3): `perEvent` gives `points` per matching event; `perUnit`
gives `properties[field] x pointsPerUnit` rounded by `rounding` (`floor`, `round` = half
away from zero, `ceil`), never below zero. Tiers are reached by lifetime points; the base
tier has threshold 0. Points lapse `pointsExpiryDays` after being earned, oldest first.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

REDEMPTION_EVENT = "loyalty.points_redeemed"
ADJUSTMENT_EVENT = "loyalty.points_adjusted"
RESERVED_EVENTS = frozenset({REDEMPTION_EVENT, ADJUSTMENT_EVENT})
ROUNDINGS = ("floor", "round", "ceil")
DEFAULT_ID = "default"
DEFAULT_REVISION = "rev_default"

MAX_EARN_RULES = 50
MAX_TIERS = 20
MAX_EXPIRY_DAYS = 3650

DEFAULT_CONFIG: dict[str, Any] = {
    "name": "Default program",
    "earnRules": [
        {"id": "purchase", "label": "1 point per unit of currency spent", "type": "perUnit",
         "eventName": "purchase", "field": "amount", "pointsPerUnit": 1, "rounding": "floor"},
    ],
    "tiers": [
        {"id": "member", "name": "Member", "threshold": 0, "benefits": []},
        {"id": "silver", "name": "Silver", "threshold": 1000, "benefits": []},
        {"id": "gold", "name": "Gold", "threshold": 5000, "benefits": []},
    ],
    "pointsExpiryDays": None,
}


@dataclass(frozen=True)
class Program:
    name: str
    earn_rules: list[dict[str, Any]]
    tiers: list[dict[str, Any]]  # sorted by threshold, the first at 0
    points_expiry_days: int | None = None
    id: str = DEFAULT_ID
    source: str = "default"
    revision_id: str = DEFAULT_REVISION
    created_at: datetime | None = None
    updated_at: datetime | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_config(cls, config: dict[str, Any], **meta: Any) -> Program:
        """From the API shape (camelCase keys, already validated)."""
        return cls(
            name=config["name"],
            earn_rules=[dict(rule) for rule in config["earnRules"]],
            tiers=sorted((dict(tier) for tier in config["tiers"]),
                         key=lambda tier: tier["threshold"]),
            points_expiry_days=config.get("pointsExpiryDays"),
            **meta,
        )

    @classmethod
    def default(cls) -> Program:
        return cls.from_config(DEFAULT_CONFIG)

    def config(self) -> dict[str, Any]:
        return {"name": self.name, "earnRules": self.earn_rules, "tiers": self.tiers,
                "pointsExpiryDays": self.points_expiry_days}

    @property
    def relevant_event_names(self) -> list[str]:
        names = {rule["eventName"] for rule in self.earn_rules} | RESERVED_EVENTS
        return sorted(names)

    def tier_for(self, lifetime: int) -> dict[str, Any]:
        """`current` (the highest tier reached) and `next` (with the points still needed)."""
        current, following = None, None
        for tier in self.tiers:
            if tier["threshold"] <= lifetime:
                current = tier
            elif following is None:
                following = tier
        nxt = None
        if following is not None:
            nxt = {**_tier_out(following), "points_needed": following["threshold"] - lifetime}
        return {"current": _tier_out(current) if current else None, "next": nxt,
                "lifetime_points": lifetime}


def _tier_out(tier: dict[str, Any]) -> dict[str, Any]:
    return {"id": tier["id"], "name": tier["name"], "threshold": tier["threshold"],
            "benefits": list(tier.get("benefits") or [])}
