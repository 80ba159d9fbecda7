"""The filter tree: every operator on every field type, nesting, refusals naming the rule
path, and the one-statement property of the compiled query."""

from __future__ import annotations

import datetime as dt

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from contacts.segments.filters import MAX_DEPTH, MAX_RULES, contacts_matching
from platform_core.tenancy.context import tenant_context

from .helpers import SEGMENTS, contact, contact_list, matches, rule, track, tree


@pytest.fixture
def people(tenant):
    """Four contacts covering every field kind, two lists and some tracked events."""
    ann = contact(tenant, first_name="Ann", last_name="Lee", email="ann@gmail.com",
                  phone="+14155550101", tags=["vip", "gold"],
                  custom_fields={"plan": "pro", "score": 42, "tier": "b"}, created_days_ago=10)
    bob = contact(tenant, first_name="Bob", last_name="Stone", email="bob@yahoo.com",
                  phone="+442071838750", tags=["newsletter"],
                  custom_fields={"plan": "free", "score": 7}, created_days_ago=100)
    cat = contact(tenant, first_name="Cat", email="", phone="+14155550199", tags=[],
                  custom_fields={"score": "high"},
                  created_at=dt.datetime(2024, 1, 15, 10, 0, tzinfo=dt.UTC))
    dan = contact(tenant, first_name="Dan", last_name="Lee", email="dan@gmail.com",
                  tags=["vip-lite"])
    first = contact_list(tenant, "Customers", [ann, bob])
    second = contact_list(tenant, "Prospects", [cat])
    track(tenant, ann, "purchase", times=5, days_ago=2)
    track(tenant, bob, "purchase", times=2, days_ago=3)
    track(tenant, bob, "purchase", times=1, days_ago=20)
    track(tenant, cat, "login", times=1, days_ago=40)
    track(tenant, None, "purchase", times=3, days_ago=1)  # not linked to a contact
    return {"ann": ann.pk, "bob": bob.pk, "cat": cat.pk, "dan": dan.pk,
            "L1": first.pk, "L2": second.pk}


def _expect(people, names: str) -> set[str]:
    return {people[n] for n in names.split()} if names else set()


CASES = [
    # text fields
    ("first_name", "eq", "ann", {}, "ann"),
    ("first_name", "neq", "Ann", {}, "bob cat dan"),
    ("last_name", "contains", "EE", {}, "ann dan"),
    ("last_name", "starts_with", "st", {}, "bob"),
    ("first_name", "in", ["ann", "CAT"], {}, "ann cat"),
    ("last_name", "exists", None, {}, "ann bob dan"),
    ("last_name", "not_exists", None, {}, "cat"),
    ("email", "eq", "ANN@gmail.com", {}, "ann"),
    ("email", "contains", "@gmail.com", {}, "ann dan"),
    ("email", "starts_with", "bob@", {}, "bob"),
    ("email", "in", ["dan@gmail.com", "bob@yahoo.com"], {}, "bob dan"),
    ("email", "not_exists", None, {}, "cat"),
    ("phone", "eq", "(415) 555-0101", {}, "ann"),  # national form, default country US
    ("phone", "neq", "+14155550101", {}, "bob cat dan"),
    ("phone", "starts_with", "+44", {}, "bob"),
    ("phone", "contains", "555-01", {}, "ann cat"),
    ("phone", "in", ["+14155550199", "+442071838750"], {}, "bob cat"),
    ("phone", "exists", None, {}, "ann bob cat"),
    # time fields
    ("created_at", "gte", {"days_ago": 30}, {}, "ann dan"),
    ("created_at", "lt", {"days_ago": 30}, {}, "bob cat"),
    ("created_at", "eq", "2024-01-15", {}, "cat"),
    ("created_at", "neq", "2024-01-15", {}, "ann bob dan"),
    ("created_at", "gt", "2024-01-15", {}, "ann bob dan"),
    ("created_at", "lte", "2024-01-15", {}, "cat"),
    ("created_at", "lt", "2024-01-15T12:00:00Z", {}, "cat"),
    ("created_at", "gte", "2024-01-15T12:00:00+00:00", {}, "ann bob dan"),
    ("updated_at", "exists", None, {}, "ann bob cat dan"),
    ("updated_at", "not_exists", None, {}, ""),
    # custom fields
    ("custom_fields.plan", "eq", "pro", {}, "ann"),
    ("custom_fields.plan", "neq", "pro", {}, "bob cat dan"),
    ("custom_fields.plan", "in", ["pro", "free"], {}, "ann bob"),
    ("custom_fields.plan", "contains", "RO", {}, "ann"),
    ("custom_fields.plan", "starts_with", "fr", {}, "bob"),
    ("custom_fields.score", "eq", 42, {}, "ann"),
    ("custom_fields.score", "gt", 10, {}, "ann"),
    ("custom_fields.score", "gte", 7, {}, "ann bob"),
    ("custom_fields.score", "lt", 10, {}, "bob"),  # "high" is a string: never below 10
    ("custom_fields.score", "lte", 42, {}, "ann bob"),
    ("custom_fields.score", "gt", "a", {}, "cat"),  # strings compare with strings
    ("custom_fields.tier", "exists", None, {}, "ann"),
    ("custom_fields.tier", "not_exists", None, {}, "bob cat dan"),
    # tags
    ("tags", "eq", "vip", {}, "ann"),
    ("tags", "neq", "vip", {}, "bob cat dan"),
    ("tags", "in", ["gold", "newsletter"], {}, "ann bob"),
    ("tags", "contains", "lite", {}, "dan"),
    ("tags", "starts_with", "vip", {}, "ann dan"),
    ("tags", "exists", None, {}, "ann bob dan"),
    ("tags", "not_exists", None, {}, "cat"),
    # lists
    ("list_id", "eq", "L1", {}, "ann bob"),
    ("list_id", "neq", "L1", {}, "cat dan"),
    ("list_id", "in", ["L1", "L2"], {}, "ann bob cat"),
    ("list_id", "exists", None, {}, "ann bob cat"),
    ("list_id", "not_exists", None, {}, "dan"),
    # event counts
    ("event.purchase.count", "gt", 3, {"window_days": 7}, "ann"),
    ("event.purchase.count", "gte", 3, {}, "ann bob"),
    ("event.purchase.count", "gte", 3, {"window_days": 7}, "ann"),
    ("event.purchase.count", "eq", 2, {"window_days": 7}, "bob"),
    ("event.purchase.count", "neq", 2, {"window_days": 7}, "ann cat dan"),
    ("event.purchase.count", "lt", 3, {"window_days": 7}, "bob cat dan"),
    ("event.purchase.count", "lte", 2, {}, "cat dan"),
    ("event.purchase.count", "in", [2, 5], {"window_days": 7}, "ann bob"),
    ("event.purchase.count", "eq", 0, {}, "cat dan"),
    ("event.purchase.count", "gt", 0, {"window_days": 7}, "ann bob"),
    ("event.login.count", "exists", None, {}, "cat"),
    ("event.login.count", "exists", None, {"window_days": 30}, ""),
    ("event.login.count", "not_exists", None, {"window_days": 30}, "ann bob cat dan"),
]


@pytest.mark.parametrize(("field", "operator", "value", "extra", "expected"), CASES,
                         ids=[f"{c[0]}-{c[1]}-{i}" for i, c in enumerate(CASES)])
def test_every_operator_on_every_field_type(tenant, people, field, operator, value, extra,
                                            expected):
    if field == "list_id":
        value = [people[v] for v in value] if isinstance(value, list) else people.get(value)
    filters = tree(rule(field, operator, value, **extra))
    assert matches(tenant, filters) == _expect(people, expected)


def test_nested_trees_combine_and_with_or(tenant, people):
    filters = tree(
        tree(rule("tags", "eq", "vip"), rule("email", "contains", "@gmail.com")),
        tree(rule("list_id", "eq", people["L2"]), rule("event.login.count", "exists")),
        op="or",
    )
    assert matches(tenant, filters) == _expect(people, "ann cat")

    deep = tree(
        rule("last_name", "eq", "lee"),
        tree(rule("tags", "eq", "vip"),
             tree(rule("custom_fields.plan", "exists"), rule("first_name", "eq", "dan"),
                  op="and"),
             op="or"),
    )
    assert matches(tenant, deep) == _expect(people, "ann")


def test_an_empty_top_level_tree_matches_everyone(tenant, people):
    assert matches(tenant, tree()) == _expect(people, "ann bob cat dan")


def test_other_tenants_contacts_never_match(tenant, other_tenant, people):
    contact(other_tenant, first_name="Ann", tags=["vip"], email="ann@gmail.com")
    assert matches(tenant, tree(rule("first_name", "eq", "Ann"))) == {people["ann"]}
    # a list id of another organization matches nothing here
    foreign = contact_list(other_tenant, "Theirs", [])
    assert matches(tenant, tree(rule("list_id", "eq", foreign.pk))) == set()


def test_the_count_is_one_sql_statement(tenant, people):
    filters = tree(
        rule("email", "contains", "@"),
        tree(rule("tags", "in", ["vip", "gold"]), rule("list_id", "eq", people["L1"]), op="or"),
        rule("event.purchase.count", "gte", 3, window_days=7),
        rule("event.purchase.count", "exists"),
        rule("custom_fields.score", "gt", 10),
        rule("created_at", "gte", {"days_ago": 365}),
    )
    with tenant_context(tenant.org), CaptureQueriesContext(connection) as captured:
        count = contacts_matching(filters, organization=tenant.org).count()
    assert count == 1
    assert len(captured.captured_queries) == 1
    sql = captured.captured_queries[0]["sql"].upper()
    assert "EXISTS" in sql
    assert "COUNT(" in sql


def _issues(response) -> list[str]:
    assert response.status_code == 422, response.content
    body = response.json()["error"]
    assert body["code"] == "VALIDATION_ERROR"
    return [issue["field"] for issue in body["details"]["issues"]]


BAD_TREES = [
    (tree(rule("shoe_size", "eq", "9")), "filters.rules.0.field"),
    (tree(rule("email", "eq", "a@b.c"), rule("email", "like", "a")), "filters.rules.1.operator"),
    (tree(rule("tags", "gt", "vip")), "filters.rules.0.operator"),
    (tree(rule("created_at", "contains", "2024")), "filters.rules.0.operator"),
    (tree(rule("email", "in", "a@b.c")), "filters.rules.0.value"),
    (tree(rule("email", "in", [])), "filters.rules.0.value"),
    (tree(rule("email", "eq", 12)), "filters.rules.0.value"),
    (tree(rule("first_name", "eq")), "filters.rules.0.value"),
    (tree(rule("created_at", "gte", "yesterday")), "filters.rules.0.value"),
    (tree(rule("created_at", "gte", {"days_ago": -1})), "filters.rules.0.value"),
    (tree(rule("event.purchase.count", "gt", -1)), "filters.rules.0.value"),
    (tree(rule("event.purchase.count", "gt", 1.5)), "filters.rules.0.value"),
    (tree(rule("event.purchase.count", "gt", 1, window_days=0)), "filters.rules.0.window_days"),
    (tree(rule("event.purchase.count", "gt", 1, window_days=9999)),
     "filters.rules.0.window_days"),
    (tree(rule("email", "exists", window_days=7)), "filters.rules.0.window_days"),
    (tree(rule("event..count", "gt", 1)), "filters.rules.0.field"),
    (tree(rule("custom_fields.", "eq", "x")), "filters.rules.0.field"),
    (tree(rule("custom_fields.a.b", "eq", "x")), "filters.rules.0.field"),
    (tree(rule("custom_fields.plan", "gt", True)), "filters.rules.0.value"),
    (tree(rule("custom_fields.plan", "eq", {"nested": 1})), "filters.rules.0.value"),
    (tree(rule("tags", "contains", 'a"b')), "filters.rules.0.value"),
    (tree(rule("tags", "eq", "vip"), tree(rule("email", "exists"), rule("phone", "near", 1))),
     "filters.rules.1.rules.1.operator"),
    (tree(tree()), "filters.rules.0.rules"),
    ({"op": "xor", "rules": []}, "filters.op"),
    ({"op": "and", "rules": "email"}, "filters.rules"),
    ({"op": "and", "rules": [], "limit": 3}, "filters.limit"),
    (tree({"field": "email", "operator": "exists", "valu": 1}), "filters.rules.0.valu"),
    (tree("email = x"), "filters.rules.0"),
    (["email"], "filters"),
]


@pytest.mark.parametrize(("filters", "path"), BAD_TREES,
                         ids=[p + f"-{i}" for i, (_, p) in enumerate(BAD_TREES)])
def test_refusals_name_the_rule_path(tenant, filters, path):
    response = tenant.client().post(SEGMENTS, {"name": "Bad", "filters": filters},
                                    format="json")
    assert path in _issues(response)


def test_every_fault_is_reported_at_once(tenant):
    filters = tree(rule("nope", "eq", "x"), rule("email", "bogus", "x"))
    response = tenant.client().post(SEGMENTS, {"name": "Bad", "filters": filters},
                                    format="json")
    assert _issues(response) == ["filters.rules.0.field", "filters.rules.1.operator"]


def test_nesting_deeper_than_the_limit_is_refused(tenant):
    filters = tree(rule("email", "exists"))
    for _ in range(MAX_DEPTH):
        filters = tree(filters)
    response = tenant.client().post(SEGMENTS, {"name": "Deep", "filters": filters},
                                    format="json")
    path = "filters" + ".rules.0" * MAX_DEPTH
    assert path in _issues(response)


def test_more_rules_than_the_limit_are_refused(tenant):
    filters = tree(*[rule("email", "exists")] * (MAX_RULES + 1))
    response = tenant.client().post(SEGMENTS, {"name": "Wide", "filters": filters},
                                    format="json")
    assert _issues(response) == ["filters"]


def test_filters_are_required(tenant):
    response = tenant.client().post(SEGMENTS, {"name": "None"}, format="json")
    assert _issues(response) == ["filters"]
