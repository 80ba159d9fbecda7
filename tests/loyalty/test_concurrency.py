"""Concurrent redemptions through real connections never overdraw a member."""

from __future__ import annotations

import pytest

from tests.concurrency import run_together

from .helpers import MEMBERS, author, make_contact, member, track
from .test_members import RULES

pytestmark = pytest.mark.django_db(transaction=True)


def test_concurrent_redeems_never_overdraw(tenant):
    author(tenant, RULES)
    contact = make_contact(tenant)
    for _ in range(12):
        track(tenant, contact["email"], "store.visit")  # 96 points
    url = f"{MEMBERS}/{contact['id']}/redeem"

    def redeem():
        response = tenant.client().post(url, {"points": 30, "reward": "x"}, format="json")
        return response.status_code, response.json()

    results = run_together([redeem for _ in range(8)])
    statuses = [status for status, _ in results]
    assert statuses.count(201) == 3, results  # 3 x 30 = 90 <= 96 < 4 x 30
    assert statuses.count(422) == 5
    assert all(body["error"]["code"] == "LOYALTY_INSUFFICIENT_POINTS"
               for status, body in results if status == 422)
    # Each success saw the successes committed before it.
    assert sorted(body["data"]["balance"]["available"]
                  for status, body in results if status == 201) == [6, 36, 66]
    assert member(tenant, contact["id"])["balance"]["available"] == 6


def test_concurrent_redeems_and_debit_adjustments(tenant):
    author(tenant, RULES)
    contact = make_contact(tenant)
    for _ in range(5):
        track(tenant, contact["email"], "store.visit")  # 40 points
    base = f"{MEMBERS}/{contact['id']}"

    def redeem():
        return tenant.client().post(f"{base}/redeem", {"points": 15, "reward": "x"},
                                    format="json").status_code

    def debit():
        return tenant.client().post(f"{base}/adjust", {"points": -15, "reason": "x"},
                                    format="json").status_code

    statuses = run_together([redeem, debit, redeem, debit, redeem, debit])
    assert statuses.count(201) == 2
    assert member(tenant, contact["id"])["balance"]["available"] == 10
