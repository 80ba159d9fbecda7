"""Autopilot: common phrasings to filter trees (rule-based until the AI engine lands)."""

from __future__ import annotations

import pytest

from contacts.segments.models import Segment
from platform_core.tenancy.context import tenant_context

from .helpers import AUTOPILOT, contact, contact_list, rule, track, tree


def _describe(tenant, description: str):
    return tenant.client().post(AUTOPILOT, {"description": description}, format="json")


PHRASINGS = [
    ("contacts tagged vip", tree(rule("tags", "eq", "vip"))),
    ("Contacts tagged with \"big spender\"", tree(rule("tags", "eq", "big spender"))),
    ("people not tagged churned", tree(rule("tags", "neq", "churned"))),
    ("contacts with no tags", tree(rule("tags", "not_exists"))),
    ("with email at gmail.com", tree(rule("email", "contains", "@gmail.com"))),
    ("customers with gmail.com emails", tree(rule("email", "contains", "@gmail.com"))),
    ("contacts whose email is Ann@Example.com", tree(rule("email", "eq", "ann@example.com"))),
    ("contacts without an email", tree(rule("email", "not_exists"))),
    ("contacts with a phone number", tree(rule("phone", "exists"))),
    ("with phone starting with +44", tree(rule("phone", "starts_with", "+44"))),
    ("who signed up in the last 30 days",
     tree(rule("created_at", "gte", {"days_ago": 30}))),
    ("users who joined in the past 2 weeks",
     tree(rule("created_at", "gte", {"days_ago": 14}))),
    ("contacts created in the last month",
     tree(rule("created_at", "gte", {"days_ago": 30}))),
    ("who signed up more than 90 days ago",
     tree(rule("created_at", "lt", {"days_ago": 90}))),
    ("who signed up before 2024-01-01", tree(rule("created_at", "lt", "2024-01-01"))),
    ("who did purchase more than 3 times in the last 7 days",
     tree(rule("event.purchase.count", "gt", 3, window_days=7))),
    ("who did purchase at least 2 times",
     tree(rule("event.purchase.count", "gte", 2))),
    ("who did checkout_started in the last 3 days",
     tree(rule("event.checkout_started.count", "exists", window_days=3))),
    ("who did purchase exactly once", tree(rule("event.purchase.count", "eq", 1))),
    ("who never did login in the last 2 weeks",
     tree(rule("event.login.count", "not_exists", window_days=14))),
    ("who did order.completed fewer than 5 times in the last 30 days",
     tree(rule("event.order.completed.count", "lt", 5, window_days=30))),
    ("named Ann", tree(rule("first_name", "eq", "Ann"))),
    ("whose last name is Smith", tree(rule("last_name", "eq", "Smith"))),
    ("with plan = pro", tree(rule("custom_fields.plan", "eq", "pro"))),
    ("whose score is above 10", tree(rule("custom_fields.score", "gt", 10))),
    ("contacts tagged vip and with email at gmail.com",
     tree(rule("tags", "eq", "vip"), rule("email", "contains", "@gmail.com"))),
    ("who did purchase 3 or more times", tree(rule("event.purchase.count", "gte", 3))),
    ("with score >= 5", tree(rule("custom_fields.score", "gte", 5))),
    ("customers who have an email and a phone number",
     tree(rule("email", "exists"), rule("phone", "exists"))),
    ("contacts tagged VIP who did purchase in the last week",
     tree(rule("tags", "eq", "VIP"), rule("event.purchase.count", "exists", window_days=7))),
    ("tagged vip or gold", tree(rule("tags", "eq", "vip"), rule("tags", "eq", "gold"), op="or")),
    ("contacts tagged vip or tagged gold",
     tree(rule("tags", "eq", "vip"), rule("tags", "eq", "gold"), op="or")),
    ("tagged vip, who signed up in the last 7 days or with plan = pro",
     tree(tree(rule("tags", "eq", "vip"), rule("created_at", "gte", {"days_ago": 7})),
          rule("custom_fields.plan", "eq", "pro"), op="or")),
]


@pytest.mark.parametrize(("description", "expected"), PHRASINGS,
                         ids=[p[0] for p in PHRASINGS])
def test_common_phrasings(tenant, description, expected):
    response = _describe(tenant, description)
    assert response.status_code == 200, response.content
    data = response.json()["data"]
    assert data["filters"] == expected
    assert data["explanation"].startswith("Contacts ")
    assert isinstance(data["matched_count"], int)


def test_matched_count_and_explanation(tenant):
    ann = contact(tenant, first_name="Ann", email="ann@gmail.com", tags=["vip"])
    contact(tenant, first_name="Bob", email="bob@gmail.com")
    contact(tenant, first_name="Cat", email="cat@yahoo.com", tags=["vip"])
    track(tenant, ann, "purchase", times=4, days_ago=1)
    response = _describe(tenant, "contacts tagged vip and with email at gmail.com")
    data = response.json()["data"]
    assert data["matched_count"] == 1
    assert "vip" in data["explanation"]
    assert "@gmail.com" in data["explanation"]
    response = _describe(tenant, "who did purchase more than 3 times in the last 7 days")
    assert response.json()["data"]["matched_count"] == 1
    with tenant_context(tenant.org):
        assert not Segment.objects.exists()  # nothing stored


def test_list_names_resolve_to_ids(tenant):
    member = contact(tenant, first_name="On list")
    contact(tenant, first_name="Off list")
    newsletter = contact_list(tenant, "Newsletter", [member])
    quoted = contact_list(tenant, "Q1 and Q2 leads", [])
    data = _describe(tenant, "contacts in list newsletter").json()["data"]
    assert data["filters"] == tree(rule("list_id", "eq", newsletter.pk))
    assert data["matched_count"] == 1
    data = _describe(tenant, 'not in list "Q1 and Q2 leads"').json()["data"]
    assert data["filters"] == tree(rule("list_id", "neq", quoted.pk))
    assert data["matched_count"] == 2


def test_another_tenants_list_is_not_found(tenant, other_tenant):
    contact_list(other_tenant, "Secret", [])
    response = _describe(tenant, "in list Secret")
    assert response.status_code == 422
    assert response.json()["error"]["code"] == "AI_PARSE_FAILED"


@pytest.mark.parametrize("description", [
    "the ones my boss likes",
    "tagged vip and",
    "who did purchase more than 3 times in the last 20 years",
    "contacts",
])
def test_unparseable_descriptions_answer_422(tenant, description):
    response = _describe(tenant, description)
    assert response.status_code == 422, response.content
    assert response.json()["error"]["code"] == "AI_PARSE_FAILED"


def test_description_is_required(tenant):
    response = tenant.client().post(AUTOPILOT, {}, format="json")
    assert response.status_code == 422
    assert response.json()["error"]["code"] == "VALIDATION_ERROR"


class _StubEngine:
    def describe_to_filters(self, description, organization):
        return {"op": "and", "rules": [{"field": "nonsense", "operator": "eq", "value": 1}]}


def test_an_engines_answer_is_validated(tenant, settings):
    settings.SEGMENTS_AUTOPILOT_ENGINE = f"{__name__}._StubEngine"
    response = _describe(tenant, "anything")
    assert response.status_code == 422
    assert response.json()["error"]["details"]["issues"][0]["field"] == "filters.rules.0.field"
