"""Liveness and readiness."""

from __future__ import annotations

from django.test import override_settings


def test_health_is_public_and_cheap(anon, db, django_assert_max_num_queries):
    with django_assert_max_num_queries(0):
        response = anon.get("/health")
    assert response.status_code == 200
    assert response.json()["data"] == {"status": "ok"}


def test_ready_checks_database_cache_and_broker(anon, db):
    response = anon.get("/ready")
    assert response.status_code == 200
    assert response.json()["data"]["checks"] == {"database": "ok", "cache": "ok", "broker": "ok"}


def test_ready_answers_503_naming_what_is_down(anon, db):
    unreachable = {
        "default": {
            "BACKEND": "django_redis.cache.RedisCache",
            "LOCATION": "redis://127.0.0.1:1/0",
            "OPTIONS": {"SOCKET_CONNECT_TIMEOUT": 0.2, "SOCKET_TIMEOUT": 0.2},
        }
    }
    with override_settings(CACHES=unreachable):  # Django rebuilds the cache handlers
        response = anon.get("/ready")
    assert response.status_code == 503
    body = response.json()
    assert body["error"]["code"] == "SERVICE_UNAVAILABLE"
    assert body["error"]["details"]["checks"]["cache"] == "unavailable"
    assert body["error"]["details"]["checks"]["database"] == "ok"
