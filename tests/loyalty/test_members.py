"""Members: balance, tier and traits from tracked events, the members list, detail."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import time_machine

from platform_core.events.models import TrackedEvent

from .helpers import MEMBERS, Ref, author, make_contact, member, scoped_client, track

T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)

RULES = {
    "name": "Rules",
    "earnRules": [
        {"id": "visit", "type": "perEvent", "eventName": "store.visit", "points": 7},
        {"id": "floor", "type": "perUnit", "eventName": "order.paid", "field": "total",
         "pointsPerUnit": 1.5, "rounding": "floor"},
        {"id": "round", "type": "perUnit", "eventName": "review.posted", "field": "stars",
         "pointsPerUnit": 2.5, "rounding": "round"},
        {"id": "ceil", "type": "perUnit", "eventName": "km.run", "field": "km",
         "pointsPerUnit": 0.3, "rounding": "ceil"},
        # Two rules on one event both count.
        {"id": "visit-bonus", "type": "perEvent", "eventName": "store.visit", "points": 1},
    ],
    "tiers": [
        {"id": "base", "name": "Base", "threshold": 0, "benefits": []},
        {"id": "silver", "name": "Silver", "threshold": 50, "benefits": ["5% off"]},
        {"id": "gold", "name": "Gold", "threshold": 120, "benefits": ["10% off"]},
    ],
}

EVENTS = [
    ("store.visit", {}),
    ("order.paid", {"total": 19.99}),        # 29.985 -> 29
    ("order.paid", {"total": "10.1"}),       # numeric string: 15.15 -> 15
    ("order.paid", {"total": -40}),          # a negative value earns nothing
    ("order.paid", {"total": "abc"}),        # not a number: nothing
    ("order.paid", {"amount": 100}),         # another property: nothing
    ("review.posted", {"stars": 3}),         # 7.5 -> 8 (half away from zero)
    ("review.posted", {"stars": 1}),         # 2.5 -> 3
    ("km.run", {"km": 10}),                  # 3.0 -> 3 (exact, not bumped)
    ("km.run", {"km": 10.1}),                # 3.03 -> 4
    ("other.event", {"total": 1000}),        # no rule
]


def _seed(tenant, contact, events, at=T0) -> Ref:
    ref = Ref(RULES)
    for offset, (name, props) in enumerate(events):
        when = at + timedelta(minutes=offset)
        track(tenant, contact["email"], name, props, occurred_at=when)
        ref.add(when, name, props)
    return ref


@time_machine.travel(T0 + timedelta(days=1), tick=False)
def test_rules_and_rounding(tenant):
    author(tenant, RULES)
    contact = make_contact(tenant)
    ref = _seed(tenant, contact, EVENTS)
    now = T0 + timedelta(days=1)
    expected = ref.state(now)
    assert expected["earned"] == 8 + 29 + 15 + 8 + 3 + 3 + 4  # the reference agrees by hand
    data = member(tenant, contact["id"])
    balance = data["balance"]
    for key in ("available", "lifetime", "earned", "redeemed", "expired", "adjusted"):
        assert balance[key] == expected[key], key
    assert data["contact_id"] == contact["id"]
    assert data["tier"]["current"]["name"] == ref.tier(now) == "Silver"
    assert data["tier"]["next"] == {"id": "gold", "name": "Gold", "threshold": 120,
                                    "benefits": ["10% off"],
                                    "points_needed": 120 - expected["lifetime"]}
    traits = data["traits"]
    assert traits["loyalty_points"] == expected["available"]
    assert traits["loyalty_tier"] == "Silver"
    assert traits["loyalty_event_count"] == len(EVENTS) - 1  # other.event is not relevant
    assert traits["loyalty_first_activity_at"] == "2026-03-01T09:00:00.000Z"
    assert traits["loyalty_last_activity_at"] == "2026-03-01T09:09:00.000Z"


@time_machine.travel(T0, tick=False)
def test_tier_boundaries(tenant):
    author(tenant, RULES)
    contact = make_contact(tenant)
    data = member(tenant, contact["id"])  # a contact without activity: zeros, base tier
    assert data["balance"]["available"] == 0
    assert data["tier"]["current"]["name"] == "Base"
    assert data["traits"]["loyalty_last_activity_at"] is None
    for _ in range(6):  # 6 x 8 = 48
        track(tenant, contact["email"], "store.visit")
    assert member(tenant, contact["id"])["tier"]["current"]["name"] == "Base"
    track(tenant, contact["email"], "review.posted", {"stars": 1})  # +3 = 51
    tier = member(tenant, contact["id"])["tier"]
    assert tier["current"]["name"] == "Silver"
    assert tier["lifetime_points"] == 51
    # Exactly at a threshold reaches the tier; redemptions never lower the tier.
    contact2 = make_contact(tenant)
    for _ in range(15):
        track(tenant, contact2["email"], "store.visit")
    assert member(tenant, contact2["id"])["tier"]["current"]["name"] == "Gold"
    assert member(tenant, contact2["id"])["tier"]["next"] is None
    response = tenant.client().post(f"{MEMBERS}/{contact2['id']}/redeem",
                                    {"points": 100, "reward": "mug"}, format="json")
    assert response.status_code == 201
    after = member(tenant, contact2["id"])
    assert after["balance"]["available"] == 20
    assert after["tier"]["current"]["name"] == "Gold"


@time_machine.travel(T0, tick=False)
def test_only_the_members_own_events_count(tenant, other_tenant):
    author(tenant, RULES)
    author(other_tenant, RULES)
    contact = make_contact(tenant, "shared@example.com")
    make_contact(other_tenant, "shared@example.com")
    neighbour = make_contact(tenant)
    track(tenant, contact["email"], "store.visit")
    track(tenant, neighbour["email"], "store.visit")
    track(other_tenant, "shared@example.com", "store.visit")
    track(tenant, "nobody@example.com", "store.visit")  # no contact: never a member
    # Events after now (occurred_at may be up to 5 minutes ahead) do not count yet.
    track(tenant, contact["email"], "store.visit", occurred_at=T0 + timedelta(minutes=3))
    assert member(tenant, contact["id"])["balance"]["available"] == 8
    with time_machine.travel(T0 + timedelta(minutes=4), tick=False):
        assert member(tenant, contact["id"])["balance"]["available"] == 16


def test_events_tracked_before_the_contact_exists_count(tenant):
    track(tenant, "early@example.com", "purchase", {"amount": 12})
    contact = make_contact(tenant, "early@example.com")
    assert member(tenant, contact["id"])["balance"]["available"] == 12


def test_unknown_and_foreign_members_are_404(tenant, other_tenant):
    foreign = make_contact(other_tenant)
    for contact_id in ("cnt_unknown", foreign["id"]):
        for call in (
            lambda cid: tenant.client().get(f"{MEMBERS}/{cid}"),
            lambda cid: tenant.client().post(f"{MEMBERS}/{cid}/redeem",
                                             {"points": 1, "reward": "x"}, format="json"),
            lambda cid: tenant.client().post(f"{MEMBERS}/{cid}/adjust",
                                             {"points": 5, "reason": "x"}, format="json"),
        ):
            response = call(contact_id)
            assert response.status_code == 404, response.content
            assert response.json()["error"]["code"] == "NOT_FOUND"
    assert TrackedEvent.objects.for_organization(other_tenant.org).count() == 0


# --- Expiry ------------------------------------------------------------------------------


def _at(day: float) -> datetime:
    return T0 + timedelta(days=day)


def test_expiry_oldest_points_first(tenant):
    """30-day expiry: lots of 100 (day 0), 50 (day 10) and 30 (day 40); 120 redeemed on day
    5 (before the first lot lapses); checked along the way against the reference."""
    program = {**RULES, "earnRules": [RULES["earnRules"][1]], "pointsExpiryDays": 30}
    author(tenant, program)
    contact = make_contact(tenant)
    ref = Ref(program)

    def earn(day, total):
        with time_machine.travel(_at(day), tick=False):
            track(tenant, contact["email"], "order.paid", {"total": total})
            ref.add(_at(day), "order.paid", {"total": total})

    def redeem(day, points):
        with time_machine.travel(_at(day), tick=False):
            response = tenant.client().post(f"{MEMBERS}/{contact['id']}/redeem",
                                            {"points": points, "reward": "r"}, format="json")
            assert response.status_code == 201, response.content
            ref.add(_at(day), "loyalty.points_redeemed", {"points": points})

    earn(0, 100 / 1.5)   # 66.67 x 1.5 = 100.0 -> exactly 100 (or 99 by float): reference
    earn(10, 50 / 1.5)
    redeem(5, 20)
    redeem(12, 100)      # consumes the rest of lot 1 (80) and 20 of lot 2
    earn(40, 20)         # 30
    checks = {29.9: None, 30: None, 39.99: None, 40: None, 41: None, 71: None}
    for day in checks:
        with time_machine.travel(_at(day), tick=False):
            data = member(tenant, contact["id"])
            expected = ref.state(_at(day))
            assert data["balance"]["available"] == expected["available"], day
            assert data["balance"]["expired"] == expected["expired"], day
            assert data["tier"]["lifetime_points"] == expected["lifetime"], day
    # Lot 1 was fully consumed before it lapsed: nothing expired at day 30. Lot 2 (50, 20
    # of it consumed) lapses 30 at day 40.
    assert ref.state(_at(30))["expired"] == 0
    assert ref.state(_at(40))["expired"] == 30


def test_expiry_with_a_debit_after_a_lapse(tenant):
    """A debit made after a lot lapsed cannot consume it: it takes the next lot."""
    program = {**RULES, "earnRules": [RULES["earnRules"][0]], "pointsExpiryDays": 10}
    author(tenant, program)
    contact = make_contact(tenant)
    ref = Ref(program)
    for day in (0, 1, 2, 15, 16):
        track(tenant, contact["email"], "store.visit", occurred_at=_at(day))
        ref.add(_at(day), "store.visit")
    with time_machine.travel(_at(17), tick=False):
        # Days 0-2 lapsed (3 x 7 = 21); 14 available.
        data = member(tenant, contact["id"])
        assert data["balance"]["expired"] == ref.state(_at(17))["expired"] == 21
        assert data["balance"]["available"] == 14
        response = tenant.client().post(f"{MEMBERS}/{contact['id']}/redeem",
                                        {"points": 15, "reward": "x"}, format="json")
        assert response.status_code == 422
        assert response.json()["error"]["code"] == "LOYALTY_INSUFFICIENT_POINTS"
        assert response.json()["error"]["details"] == {"available": 14, "requested": 15}
        assert tenant.client().post(f"{MEMBERS}/{contact['id']}/redeem",
                                    {"points": 10, "reward": "x"}, format="json"
                                    ).status_code == 201
        ref.add(_at(17), "loyalty.points_redeemed", {"points": 10})
    with time_machine.travel(_at(25.5), tick=False):
        # The day-15 lot (7) and 3 of the day-16 lot were consumed; 4 lapse at day 26.
        data = member(tenant, contact["id"])
        assert data["balance"]["available"] == ref.state(_at(25.5))["available"] == 4
        assert data["balance"]["expiring_soon"] == {"points": 4, "within_days": 30}
    with time_machine.travel(_at(26), tick=False):
        data = member(tenant, contact["id"])
        assert data["balance"]["available"] == ref.state(_at(26))["available"] == 0
        assert data["balance"]["expired"] == 21 + 4


def test_expiry_randomised_history_matches_reference(tenant):
    """A seeded random history of earns, redemptions and adjustments over 200 days."""
    program = {**RULES, "pointsExpiryDays": 45}
    author(tenant, program)
    contact = make_contact(tenant)
    ref = Ref(program)
    rng = random.Random(22)  # noqa: S311 - test data
    day = 0.0
    for _ in range(60):
        day += rng.uniform(0.2, 6)
        when = _at(day)
        roll = rng.random()
        with time_machine.travel(when, tick=False):
            if roll < 0.6:
                name, props = rng.choice(EVENTS)
                track(tenant, contact["email"], name, props)
                ref.add(when, name, props)
                continue
            available = ref.state(when)["available"]
            if roll < 0.85 and available > 0:
                points = rng.randint(1, available)
                response = tenant.client().post(f"{MEMBERS}/{contact['id']}/redeem",
                                                {"points": points, "reward": "r"},
                                                format="json")
                assert response.status_code == 201, (day, response.content)
                assert response.json()["data"]["balance"]["available"] == available - points
                ref.add(when, "loyalty.points_redeemed", {"points": points})
            else:
                points = rng.randint(-available, 40) or 1
                response = tenant.client().post(f"{MEMBERS}/{contact['id']}/adjust",
                                                {"points": points, "reason": "random"},
                                                format="json")
                assert response.status_code == 201, (day, response.content)
                ref.add(when, "loyalty.points_adjusted", {"points": points})
    assert ref.state(_at(day))["expired"] > 0  # the history does exercise expiry
    for check in (day / 3, day / 2, day, day + 20, day + 60):
        with time_machine.travel(_at(check), tick=False):
            data = member(tenant, contact["id"])
        expected = ref.state(_at(check))
        for key in ("available", "lifetime", "earned", "redeemed", "expired", "adjusted"):
            assert data["balance"][key] == expected[key], (check, key)
        assert data["tier"]["current"]["name"] == ref.tier(_at(check))


# --- The members list --------------------------------------------------------------------


@time_machine.travel(T0, tick=False)
def test_members_list_pages_contacts_with_activity(tenant, other_tenant,
                                                   django_assert_max_num_queries):
    author(tenant, RULES)
    members = [make_contact(tenant) for _ in range(5)]
    idle = make_contact(tenant)
    irrelevant = make_contact(tenant)
    for i, contact in enumerate(members):
        for _ in range(i + 1):
            track(tenant, contact["email"], "store.visit")
    track(tenant, irrelevant["email"], "other.event")
    adjusted = make_contact(tenant)  # an adjustment alone is activity
    tenant.client().post(f"{MEMBERS}/{adjusted['id']}/adjust", {"points": 3, "reason": "gift"},
                         format="json")
    foreign = make_contact(other_tenant)
    track(other_tenant, foreign["email"], "purchase", {"amount": 3})

    seen, cursor = [], None
    while True:
        url = f"{MEMBERS}?limit=2" + (f"&cursor={cursor}" if cursor else "")
        with django_assert_max_num_queries(8):
            response = tenant.client().get(url)
        assert response.status_code == 200, response.content
        body = response.json()
        seen.extend(body["data"])
        cursor = body["meta"]["pagination"]["cursor"]
        if not body["meta"]["pagination"]["has_more"]:
            break
    ids = [item["contact_id"] for item in seen]
    expected_ids = sorted([c["id"] for c in members] + [adjusted["id"]], reverse=True)
    assert ids == expected_ids
    assert idle["id"] not in ids
    assert irrelevant["id"] not in ids
    by_id = {item["contact_id"]: item for item in seen}
    for i, contact in enumerate(members):
        assert by_id[contact["id"]]["balance"]["available"] == 8 * (i + 1)
    assert by_id[adjusted["id"]]["balance"]["adjusted"] == 3
    # A page of many members costs the same number of queries as a page of two.
    for _ in range(20):
        extra = make_contact(tenant)
        track(tenant, extra["email"], "store.visit")
    with django_assert_max_num_queries(8):
        assert len(tenant.client().get(f"{MEMBERS}?limit=50").json()["data"]) == 26


def test_members_list_follows_the_program(tenant):
    contact = make_contact(tenant)
    track(tenant, contact["email"], "store.visit")
    assert tenant.client().get(MEMBERS).json()["data"] == []  # default program: purchases
    author(tenant, RULES)
    assert [m["contact_id"] for m in tenant.client().get(MEMBERS).json()["data"]] == [
        contact["id"]]


def test_members_bad_cursor_and_limit(tenant):
    assert tenant.client().get(f"{MEMBERS}?cursor=nope").json()["error"]["code"] == \
        "INVALID_CURSOR"
    assert tenant.client().get(f"{MEMBERS}?limit=0").status_code == 400


def test_member_reads_need_contacts_read(tenant):
    contact = make_contact(tenant)
    outsider = scoped_client(tenant, ["messages:read"])
    for url in (MEMBERS, f"{MEMBERS}/{contact['id']}"):
        assert outsider.get(url).status_code == 403
    reader = scoped_client(tenant, ["contacts:read"])
    assert reader.get(MEMBERS).status_code == 200
    assert reader.get(f"{MEMBERS}/{contact['id']}").status_code == 200


@time_machine.travel(T0, tick=False)
def test_odd_property_values(tenant):
    author(tenant, RULES)
    contact = make_contact(tenant)
    odd = [("order.paid", {"total": True}), ("order.paid", {"total": {"a": 1}}),
           ("order.paid", {"total": [3]}), ("order.paid", {"total": None}),
           ("order.paid", {"total": "1e2"}), ("order.paid", {"total": " 5"}),
           ("loyalty.points_adjusted", {"points": 2.5}),
           ("loyalty.points_redeemed", {"points": "x"})]
    ref = _seed(tenant, contact, odd, at=T0 - timedelta(hours=1))
    assert ref.state(T0)["earned"] == 150  # only "1e2" is a number: 100 x 1.5
    assert member(tenant, contact["id"])["balance"]["available"] == 150
    # A huge value earns at most 10^12 points per event (no overflow).
    track(tenant, contact["email"], "order.paid", {"total": 1e300})
    assert member(tenant, contact["id"])["balance"]["earned"] == 150 + 10**12
