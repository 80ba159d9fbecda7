"""The window conventions every insights read shares (Document 3, 4.4 and 8)."""

from __future__ import annotations

import pytest
import time_machine

from tests.insights.conftest import NOW, data, get


def issues(response) -> dict[str, str]:
    assert response.status_code == 422, response.content
    body = response.json()["error"]
    assert body["code"] == "VALIDATION_ERROR"
    return {i["field"]: i["message"] for i in body["details"]["issues"]}


@pytest.mark.parametrize("path", ["llm-spend/summary", "llm-spend/timeseries",
                                  "llm-spend/top-conversations", "llm-spend/by-feature",
                                  "agent-roi", "agent-roi/timeseries", "containment",
                                  "containment/timeseries", "agent-benchmarks",
                                  "cost-economics"])
def test_every_windowed_read_refuses_a_bad_window(tenant, path):
    client = tenant.client()
    assert "from" in issues(get(client, path, **{"from": "2026-03-01T00:00:00"}))  # no offset
    assert "from" in issues(get(client, path, **{"from": "yesterday"}))
    assert "from" in issues(get(client, path, **{"from": "2026-03-02T00:00:00Z",
                                                 "to": "2026-03-01T00:00:00Z"}))
    assert "from" in issues(get(client, path, **{"from": "2026-03-01T00:00:00Z",
                                                 "to": "2026-03-01T00:00:00Z"}))
    assert "to" in issues(get(client, path, **{"from": "2025-01-01T00:00:00Z",
                                               "to": "2026-01-02T00:00:00Z"}))
    ok = get(client, path, **{"from": "2025-01-01T00:00:00+01:00",
                              "to": "2026-01-01T00:00:00+01:00"})  # exactly 365 days
    assert ok.status_code == 200, ok.content


def test_several_problems_are_listed_together(tenant):
    found = issues(get(tenant.client(), "llm-spend/summary", **{
        "from": "nope", "groupBy": "team", "limit": "0"}))
    assert set(found) == {"from", "groupBy", "limit"}


@pytest.mark.parametrize(("path", "high"), [("llm-spend/summary", 200), ("agent-roi", 200),
                                            ("containment", 200),
                                            ("llm-spend/top-conversations", 50)])
def test_limit_bounds(tenant, path, high):
    client = tenant.client()
    assert "limit" in issues(get(client, path, limit="0"))
    assert "limit" in issues(get(client, path, limit=str(high + 1)))
    assert "limit" in issues(get(client, path, limit="ten"))
    assert get(client, path, limit=str(high)).status_code == 200
    assert get(client, path, limit="1").status_code == 200


def test_hourly_series_cover_at_most_14_days(tenant):
    client = tenant.client()
    for path in ("llm-spend/timeseries", "containment/timeseries", "agent-roi/timeseries"):
        found = issues(get(client, path, granularity="hour", **{
            "from": "2026-03-01T00:00:00Z", "to": "2026-03-15T00:00:01Z"}))
        assert "granularity" in found
        ok = data(get(client, path, granularity="hour", **{
            "from": "2026-03-01T00:00:00Z", "to": "2026-03-15T00:00:00Z"}))
        assert len(ok["series"]) == 14 * 24
        assert "granularity" in issues(get(client, path, granularity="week"))


def test_default_and_back_filled_windows(tenant):
    client = tenant.client()
    with time_machine.travel(NOW, tick=False):
        body = data(get(client, "llm-spend/summary"))
        assert (body["from"], body["to"]) == ("2026-02-18T15:07:00+00:00",
                                              "2026-03-20T15:07:00+00:00")
        hourly = data(get(client, "llm-spend/timeseries", granularity="hour"))
        assert hourly["from"] == "2026-03-13T15:07:00+00:00"
        assert len(hourly["series"]) == 7 * 24 + 1  # the partial hours at both ends
    only_to = data(get(client, "llm-spend/summary", to="2026-03-31T12:00:00-04:00"))
    assert (only_to["from"], only_to["to"]) == ("2026-03-01T16:00:00+00:00",
                                                "2026-03-31T16:00:00+00:00")
    only_from = data(get(client, "llm-spend/summary", **{"from": "2026-01-01T00:00:00Z"}))
    assert only_from["to"] == "2026-01-31T00:00:00+00:00"


def test_a_plus_sign_left_unescaped_in_the_url_still_parses(tenant):
    response = tenant.client().get(
        "/api/v1/insights/llm-spend/summary?from=2026-01-01T00:00:00+05:00")
    assert data(response)["from"] == "2025-12-31T19:00:00+00:00"


def test_unauthenticated_and_scopes(tenant, anon):
    assert anon.get("/api/v1/insights/llm-spend/summary").status_code == 401
    from platform_core.identity import services

    _, raw = services.api_key_create(organization=tenant.org, name="reader", key_type="secret",
                                     scopes=["insights:read"], mode="test")
    reader = tenant.client(raw)
    assert reader.get("/api/v1/insights/llm-spend/budget").status_code == 200
    refused = reader.put("/api/v1/insights/llm-spend/budget", {"daily_cap_cents": 5},
                         format="json")
    assert refused.status_code == 403
    _, other = services.api_key_create(organization=tenant.org, name="msgs", key_type="secret",
                                       scopes=["messages:write"], mode="test")
    assert tenant.client(other).get("/api/v1/insights/agent-roi").status_code == 403
