"""Rate limits: standard read/write buckets per credential and per-endpoint overrides."""

from __future__ import annotations

import time

from django.test import override_settings

from platform_core.identity import services


def _second_key(tenant) -> str:
    _key, raw = services.api_key_create(
        organization=tenant.org, name="second", key_type="secret", mode=None, scopes=["*"]
    )
    return raw


@override_settings(RATE_LIMIT_READ_PER_MINUTE=3)
def test_read_bucket_refuses_with_429_and_headers(tenant):
    client = tenant.client()
    remaining = []
    for _ in range(3):
        response = client.get("/api/v1/organization")
        assert response.status_code == 200
        assert response["X-RateLimit-Limit"] == "3"
        remaining.append(int(response["X-RateLimit-Remaining"]))
        assert int(response["X-RateLimit-Reset"]) > time.time()
    assert remaining == [2, 1, 0]
    response = client.get("/api/v1/organization")
    assert response.status_code == 429
    body = response.json()
    assert body["error"]["code"] == "RATE_LIMITED"
    assert body["error"]["status"] == 429
    assert 1 <= int(response["Retry-After"]) <= 61
    assert response["X-RateLimit-Remaining"] == "0"


@override_settings(RATE_LIMIT_READ_PER_MINUTE=2)
def test_buckets_are_per_credential(tenant):
    client = tenant.client()
    for _ in range(2):
        client.get("/api/v1/organization")
    assert client.get("/api/v1/organization").status_code == 429
    assert tenant.client(_second_key(tenant)).get("/api/v1/organization").status_code == 200


@override_settings(RATE_LIMIT_READ_PER_MINUTE=2, RATE_LIMIT_WRITE_PER_MINUTE=50)
def test_write_bucket_is_separate_from_read(tenant):
    client = tenant.client()
    for _ in range(2):
        client.get("/api/v1/organization")
    assert client.get("/api/v1/organization").status_code == 429
    response = client.patch("/api/v1/organization", {"name": "Still writable"}, format="json")
    assert response.status_code == 200
    assert response["X-RateLimit-Limit"] == "50"


@override_settings(ROOT_URLCONF="tests.platform_core.crash_urls")
def test_per_endpoint_limit_is_shared_by_the_tenant(tenant, other_tenant):
    first, second = tenant.client(), tenant.client(_second_key(tenant))
    assert first.post("/test/bulk", {}, format="json").status_code == 202
    assert second.post("/test/bulk", {}, format="json").status_code == 202
    response = first.post("/test/bulk", {}, format="json")
    assert response.status_code == 429
    assert response.json()["error"]["details"]["limit"] == "bulk_verify"
    assert other_tenant.client().post("/test/bulk", {}, format="json").status_code == 202


@override_settings(RATE_LIMIT_READ_PER_MINUTE=2)
def test_window_resets(tenant):
    import time_machine

    client = tenant.client()
    with time_machine.travel(time.time(), tick=False) as traveller:
        for _ in range(2):
            client.get("/api/v1/organization")
        assert client.get("/api/v1/organization").status_code == 429
        traveller.shift(61)
        assert client.get("/api/v1/organization").status_code == 200
