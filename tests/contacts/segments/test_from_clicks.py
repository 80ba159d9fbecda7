"""Click cohorts: distinct clickers of a link or campaign in a window; never refreshed."""

from __future__ import annotations

from datetime import timedelta

import pytest
import time_machine
from django.utils import timezone

from contacts.segments import tasks

from .helpers import (
    FROM_CLICKS,
    SEGMENTS,
    api_key,
    click,
    contact,
    create_segment,
    link,
    member_ids,
    rule,
    tree,
)


@pytest.fixture
def clicks(tenant):
    ann, bob, cat, dan = (contact(tenant, first_name=n) for n in ("Ann", "Bob", "Cat", "Dan"))
    spring = link(tenant, campaign_id="cmp_spring")
    summer = link(tenant, campaign_id="cmp_summer")
    spring_b = link(tenant, campaign_id="cmp_spring")
    click(spring, ann, days_ago=1)
    click(spring, ann, days_ago=2)  # the same clicker twice
    click(spring, ann, days_ago=3)
    click(spring, bob, days_ago=40)  # outside the default 30-day window
    click(spring, None, days_ago=1)  # an anonymous click: no contact
    click(summer, cat, days_ago=5)
    click(spring_b, dan, days_ago=6)
    return {"ann": ann.pk, "bob": bob.pk, "cat": cat.pk, "dan": dan.pk,
            "spring": spring.pk, "summer": summer.pk}


def _cohort(tenant, body: dict, client=None) -> dict:
    response = (client or tenant.client()).post(FROM_CLICKS, body, format="json")
    assert response.status_code == 201, response.content
    return response.json()["data"]


def test_distinct_clickers_of_a_link_in_the_default_window(tenant, clicks):
    seg = _cohort(tenant, {"link_id": clicks["spring"]})
    assert seg["id"].startswith("seg_")
    assert seg["kind"] == "clicks"
    assert seg["auto_refresh"] is False
    assert seg["filters"] is None
    assert seg["member_count"] == 1  # Ann clicked three times: one member
    assert seg["source"]["link_id"] == clicks["spring"]
    assert seg["source"]["window_days"] == 30
    assert seg["name"].startswith("Clicked link ")
    assert member_ids(tenant, seg["id"]) == {clicks["ann"]}


def test_window_days_widens_the_cohort(tenant, clicks):
    seg = _cohort(tenant, {"link_id": clicks["spring"], "window_days": 60, "name": "Spring",
                           "description": "Clicked the spring sale"})
    assert (seg["name"], seg["description"]) == ("Spring", "Clicked the spring sale")
    assert member_ids(tenant, seg["id"]) == {clicks["ann"], clicks["bob"]}


def test_campaign_cohort_spans_its_links(tenant, clicks):
    seg = _cohort(tenant, {"campaign_id": "cmp_spring"})
    assert member_ids(tenant, seg["id"]) == {clicks["ann"], clicks["dan"]}
    both = _cohort(tenant, {"campaign_id": "cmp_spring", "link_id": clicks["summer"]})
    assert both["member_count"] == 0  # the summer link is not in the spring campaign


def test_cohort_never_refreshes(tenant, clicks):
    cohort = _cohort(tenant, {"link_id": clicks["summer"]})
    rule_defined = create_segment(tenant, tree(rule("first_name", "eq", "Eve")))
    eve = contact(tenant, first_name="Eve")
    from messaging.links.models import ShortLink

    click(ShortLink.objects.for_organization(tenant.org).get(pk=clicks["summer"]), eve)

    with time_machine.travel(timezone.now() + timedelta(hours=2)):
        refreshed = tasks.refresh_stale()
    assert refreshed == 1  # the rule-defined segment only
    after = tenant.client().get(f"{SEGMENTS}/{cohort['id']}").json()["data"]
    assert after["member_count"] == 1
    assert after["refreshed_at"] == cohort["refreshed_at"]
    assert member_ids(tenant, cohort["id"]) == {clicks["cat"]}
    assert member_ids(tenant, rule_defined["id"]) == {eve.pk}


def test_cohort_filters_cannot_be_patched_but_its_name_can(tenant, clicks):
    cohort = _cohort(tenant, {"link_id": clicks["summer"]})
    url = f"{SEGMENTS}/{cohort['id']}"
    refused = tenant.client().patch(url, {"filters": tree(rule("tags", "exists"))},
                                    format="json")
    assert refused.status_code == 422
    assert refused.json()["error"]["details"]["issues"][0]["field"] == "filters"
    renamed = tenant.client().patch(url, {"name": "Summer clickers"}, format="json")
    assert renamed.status_code == 200
    assert renamed.json()["data"]["name"] == "Summer clickers"


@pytest.mark.parametrize(("body", "field"), [
    ({}, "link_id"),
    ({"window_days": 7}, "campaign_id"),
    ({"link_id": "", "campaign_id": ""}, "link_id"),
    ({"campaign_id": "c", "window_days": 0}, "window_days"),
    ({"campaign_id": "c", "window_days": 366}, "window_days"),
    ({"campaign_id": "c", "window_days": "week"}, "window_days"),
    ({"link_id": "lnk_NOPE"}, "link_id"),
])
def test_bad_bodies_answer_422(tenant, body, field):
    response = tenant.client().post(FROM_CLICKS, body, format="json")
    assert response.status_code == 422, response.content
    assert field in [i["field"] for i in response.json()["error"]["details"]["issues"]]


def test_another_tenants_link_is_unknown(tenant, other_tenant, clicks):
    response = other_tenant.client().post(FROM_CLICKS, {"link_id": clicks["spring"]},
                                          format="json")
    assert response.status_code == 422
    # and a campaign id of another tenant gathers none of its clickers
    seg = _cohort(other_tenant, {"campaign_id": "cmp_spring"}, client=other_tenant.client())
    assert seg["member_count"] == 0


def test_from_clicks_needs_write_scope(tenant, clicks):
    reader = tenant.client(api_key(tenant, ["contacts:read"]))
    response = reader.post(FROM_CLICKS, {"link_id": clicks["spring"]}, format="json")
    assert response.status_code == 403
