"""Liveness (`/health`) and readiness (`/ready`: database, cache and broker reachable)."""

from __future__ import annotations

import logging

from django.core.cache import cache
from django.db import connection
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.response import Response

from platform_core.api.views import PublicAPIView
from platform_core.errors import APIError

logger = logging.getLogger(__name__)


def _check_database() -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")


def _check_cache() -> None:
    cache.set("ready:probe", "1", 5)
    if cache.get("ready:probe") != "1":
        raise RuntimeError("cache did not return what was written")


def _check_broker() -> None:
    from config.celery import app

    with app.connection_for_write() as conn:
        conn.ensure_connection(max_retries=1, timeout=2)


_STATUS = inline_serializer("HealthStatus", {"status": serializers.CharField()})
_READY = inline_serializer(
    "ReadyStatus", {"status": serializers.CharField(), "checks": serializers.DictField()}
)


class HealthView(PublicAPIView):
    @extend_schema(auth=[], tags=["health"], responses=_STATUS)
    def get(self, request):
        return Response({"status": "ok"})


class ReadyView(PublicAPIView):
    @extend_schema(auth=[], tags=["health"], responses=_READY)
    def get(self, request):
        checks = {}
        for name, check in (
            ("database", _check_database),
            ("cache", _check_cache),
            ("broker", _check_broker),
        ):
            try:
                check()
                checks[name] = "ok"
            except Exception as exc:  # any failure means not ready; say which
                logger.warning("readiness check %s failed: %s", name, exc)
                checks[name] = "unavailable"
        if any(v != "ok" for v in checks.values()):
            raise APIError("SERVICE_UNAVAILABLE", "Not ready.", details={"checks": checks})
        return Response({"status": "ready", "checks": checks})
