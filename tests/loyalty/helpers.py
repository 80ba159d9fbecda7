"""Loyalty test helpers: contacts and events through the public API, and an independent
reference model of the rules (a lot-by-lot FIFO simulation in Python with Decimal), so
expected figures never come from the code under test."""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from decimal import ROUND_CEILING, ROUND_FLOOR, ROUND_HALF_UP, Decimal
from typing import Any

from platform_core.identity import services as identity_services
from platform_core.identity.models import KeyMode, KeyType

BASE = "/api/v1/loyalty"
PROGRAM = f"{BASE}/program"
MEMBERS = f"{BASE}/members"
REDEEMED, ADJUSTED = "loyalty.points_redeemed", "loyalty.points_adjusted"

_seq = itertools.count(1)


def make_contact(tenant, email: str | None = None) -> dict[str, Any]:
    email = email or f"member-{next(_seq)}@example.com"
    response = tenant.client().post("/api/v1/contacts", {"first_name": "M", "email": email},
                                    format="json")
    assert response.status_code == 201, response.content
    return response.json()["data"]


def track(tenant, email: str, name: str, properties: dict | None = None,
          occurred_at: datetime | None = None) -> None:
    body: dict[str, Any] = {"event": name, "contact_email": email,
                            "properties": properties or {}}
    if occurred_at is not None:
        body["occurred_at"] = occurred_at.isoformat()
    response = tenant.client().post("/api/v1/events/track", body, format="json")
    assert response.status_code == 201, response.content


def author(tenant, program: dict[str, Any]) -> dict[str, Any]:
    response = tenant.client().post(PROGRAM, program, format="json")
    assert response.status_code == 201, response.content
    return response.json()["data"]


def member(tenant, contact_id: str) -> dict[str, Any]:
    response = tenant.client().get(f"{MEMBERS}/{contact_id}")
    assert response.status_code == 200, response.content
    return response.json()["data"]


def scoped_client(tenant, scopes: list[str]):
    _key, raw = identity_services.api_key_create(
        organization=tenant.org, name="scoped", key_type=KeyType.SECRET,
        mode=KeyMode.TEST if tenant.org.sandbox else KeyMode.LIVE, scopes=scopes)
    return tenant.client(raw)


# --- The reference model -----------------------------------------------------------------

_ROUNDING = {"floor": ROUND_FLOOR, "round": ROUND_HALF_UP, "ceil": ROUND_CEILING}


def points_of(properties: dict[str, Any]) -> int:
    """`points` of a redemption or adjustment: an integer, or a string of digits."""
    raw = properties.get("points")
    if isinstance(raw, int) and not isinstance(raw, bool):
        return raw
    if isinstance(raw, str) and re.fullmatch(r"-?[0-9]+", raw):
        return int(raw)
    return 0


def rule_points(rule: dict[str, Any], name: str, properties: dict[str, Any]) -> int:
    if rule["eventName"] != name:
        return 0
    if rule["type"] == "perEvent":
        return rule["points"]
    raw = properties.get(rule["field"])
    if isinstance(raw, str) and raw != raw.strip():
        return 0
    try:
        value = Decimal(str(raw))
    except Exception:  # noqa: BLE001 - any non-number earns nothing
        return 0
    if not value.is_finite() or isinstance(raw, bool):
        return 0
    product = value * Decimal(str(rule["pointsPerUnit"]))
    rounded = product.quantize(Decimal(1), rounding=_ROUNDING[rule.get("rounding", "floor")])
    return max(0, int(rounded))


@dataclass
class Ref:
    """A member's history replayed lot by lot: each credit is a lot lapsing `expiry` days
    after it was earned; each debit consumes the oldest unexpired lots first."""

    program: dict[str, Any]
    events: list[tuple[datetime, str, dict[str, Any]]] = field(default_factory=list)

    def add(self, at: datetime, name: str, properties: dict[str, Any] | None = None) -> None:
        self.events.append((at, name, properties or {}))

    def state(self, now: datetime) -> dict[str, int]:
        days = self.program.get("pointsExpiryDays")
        lots: list[list[Any]] = []  # [lapse time or None, remaining]
        earned = credited = debited = redeemed = expired = 0

        def lapse_until(moment: datetime) -> int:
            gone = 0
            for lot in lots:
                if lot[0] is not None and lot[0] <= moment and lot[1] > 0:
                    gone += lot[1]
                    lot[1] = 0
            return gone

        for at, name, props in sorted((e for e in self.events if e[0] <= now),
                                      key=lambda e: e[0]):
            expired += lapse_until(at)
            credit = sum(rule_points(r, name, props) for r in self.program["earnRules"])
            earned += credit
            debit = 0
            points = points_of(props)
            if name == ADJUSTED:
                if points > 0:
                    credited += points
                    credit += points
                else:
                    debited -= points
                    debit = -points
            if name == REDEEMED and points > 0:
                redeemed += points
                debit = points
            if credit:
                lots.append([at + timedelta(days=days) if days else None, credit])
            for lot in lots:
                take = min(lot[1], debit)
                lot[1] -= take
                debit -= take
        expired += lapse_until(now)
        lifetime = earned + credited
        return {"available": lifetime - debited - redeemed - expired, "lifetime": lifetime,
                "earned": earned, "redeemed": redeemed, "expired": expired,
                "adjusted": credited - debited}

    def tier(self, now: datetime) -> str:
        lifetime = self.state(now)["lifetime"]
        reached = [t for t in self.program["tiers"] if t["threshold"] <= lifetime]
        return max(reached, key=lambda t: t["threshold"])["name"]
