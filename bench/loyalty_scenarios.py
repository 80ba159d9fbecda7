"""The loyalty scenario of `make bench` (issue 22, "Done means"): a member balance over
10,000 events.

- `loyalty_member_balance`: GET /api/v1/loyalty/members/{id} (balance, tier and traits)
  of a member whose history holds BENCH_LOYALTY_EVENTS (10,000) tracked events over two
  years: purchases (perUnit, floor), visits (perEvent), redemptions and operator
  adjustments, under a program with two earn rules, three tiers and a 365-day expiry (so
  the FIFO lapse computation runs over every lot). Another 20,000 events of 2,000 other
  contacts share the table. Loaded with wrk against the harness's gunicorn; one SQL
  aggregation per request. Seeded once (the member is recreated when its count differs).
"""

from __future__ import annotations

import random
from datetime import timedelta
from typing import Any

from .base import BenchContext
from .env import scaled
from .scenarios import WrkScenario

MEMBER_EMAIL = "loyalty-member@bench.example.com"
NOISE_CONTACTS = 2000
NOISE_PER_CONTACT = 10
PROGRAM = {
    "name": "Bench program",
    "earnRules": [
        {"id": "spend", "label": "Spend", "type": "perUnit", "eventName": "purchase",
         "field": "amount", "pointsPerUnit": 1.5, "rounding": "floor"},
        {"id": "visit", "label": "Visit", "type": "perEvent", "eventName": "store.visit",
         "points": 5},
    ],
    "tiers": [
        {"id": "member", "name": "Member", "threshold": 0, "benefits": []},
        {"id": "silver", "name": "Silver", "threshold": 10_000, "benefits": ["5% off"]},
        {"id": "gold", "name": "Gold", "threshold": 100_000, "benefits": ["10% off"]},
    ],
    "pointsExpiryDays": 365,
}


def _history(count: int, rng: random.Random) -> list[tuple[int, str, dict[str, Any]]]:
    """(minutes ago, name, properties), oldest first; small redemptions and adjustments
    that never overdraw (each debit is far below what the purchases before it earned)."""
    span = 2 * 365 * 24 * 60
    rows = []
    for i in range(count):
        ago = span - (i * span) // count
        roll = rng.random()
        if roll < 0.80:
            rows.append((ago, "purchase", {"amount": round(rng.uniform(1, 120), 2)}))
        elif roll < 0.92:
            rows.append((ago, "store.visit", {}))
        elif roll < 0.98 and i > 100:
            rows.append((ago, "loyalty.points_redeemed",
                         {"points": rng.randint(1, 40), "reward": "bench"}))
        elif i > 100:
            rows.append((ago, "loyalty.points_adjusted",
                         {"points": rng.choice([-10, 5, 20]), "reason": "bench"}))
        else:
            rows.append((ago, "purchase", {"amount": 50}))
    return rows


def _prepare(ctx: BenchContext) -> None:
    from django.db import connection, transaction

    from contacts.models import Contact
    from loyalty import services
    from platform_core.events.models import TrackedEvent
    from platform_core.tenancy.context import tenant_context
    from platform_core.tenancy.models import Organization

    count = scaled("BENCH_LOYALTY_EVENTS", 10_000)
    org = Organization.objects.get(pk=ctx.seed.org_id)
    with tenant_context(org), transaction.atomic():
        services.program_replace(organization=org, config=PROGRAM)
        contact, _ = Contact.objects.for_organization(org).get_or_create(
            organization=org, email=MEMBER_EMAIL, defaults={"first_name": "Loyal"})
        events = TrackedEvent.objects.for_organization(org)
        ctx.values.update(loyalty_contact_id=contact.pk, loyalty_events=count)
        if events.filter(contact_id=contact.pk).count() != count:
            _seed(org, contact, count, events)
    with connection.cursor() as cursor:  # what autovacuum does after a bulk load
        cursor.execute(f"ANALYZE {TrackedEvent._meta.db_table}")


def _seed(org, contact, count: int, events) -> None:
    """The member's history (replaced) and, once, the other contacts' events."""
    from django.utils import timezone

    from platform_core.events.models import TrackedEvent

    events.filter(contact_id=contact.pk).delete()
    rng = random.Random(22)  # noqa: S311 - bench data
    now = timezone.now()
    TrackedEvent.objects.bulk_create([
        TrackedEvent(organization=org, name=name, properties=props, contact_id=contact.pk,
                     contact_email=MEMBER_EMAIL, occurred_at=now - timedelta(minutes=ago))
        for ago, name, props in _history(count, rng)], batch_size=5000)
    if not events.filter(contact_email__startswith="loyalty-noise-").exists():
        TrackedEvent.objects.bulk_create([
            TrackedEvent(organization=org, name=rng.choice(["purchase", "page.view"]),
                         properties={"amount": rng.randint(1, 99)},
                         contact_id=f"cnt_loyaltynoise{c:06d}",
                         contact_email=f"loyalty-noise-{c}@bench.example.com",
                         occurred_at=now - timedelta(hours=rng.randint(1, 17_000)))
            for c in range(NOISE_CONTACTS) for _ in range(NOISE_PER_CONTACT)],
            batch_size=5000)


def _expect(ctx: BenchContext, body: Any) -> str | None:
    data = body.get("data", {}) if isinstance(body, dict) else {}
    traits, balance = data.get("traits", {}), data.get("balance", {})
    if traits.get("loyalty_event_count") != ctx.values["loyalty_events"]:
        return f"the member's events were not all counted: {str(body)[:300]}"
    if not balance.get("expired") or balance.get("available", -1) < 0:
        return f"unexpected balance (expiry should have lapsed points): {balance}"
    return None


LOYALTY_SCENARIOS = [
    WrkScenario(
        name="loyalty_member_balance",
        title="Loyalty member balance over 10,000 events (GET /api/v1/loyalty/members/{id})",
        path=lambda ctx: f"/api/v1/loyalty/members/{ctx.values['loyalty_contact_id']}",
        prepare_fn=_prepare,
        expect=_expect,
    ),
]
