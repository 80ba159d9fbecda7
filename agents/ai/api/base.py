"""The base of every /api/v1/ai view: scope, the shared AI rate limit, body parsing."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from rest_framework import serializers as drf_serializers

from platform_core.api.exceptions import flatten_issues
from platform_core.api.ratelimit import RateLimit
from platform_core.api.serialization import validated_input
from platform_core.api.views import PlatformAPIView
from platform_core.errors import APIError

SCOPE = "ai:write"
DEFAULT_AI_RATE_LIMIT_PER_MINUTE = 120

class AIView(PlatformAPIView):
    """Base of every /ai operation: its scope and the shared per-organization AI limit."""

    required_scopes = {"POST": SCOPE}

    def get_rate_limits(self, method: str) -> list[RateLimit]:
        limits = super().get_rate_limits(method)
        if method == "POST":
            limits.append(RateLimit("ai", int(getattr(
                settings, "AI_RATE_LIMIT_PER_MINUTE", DEFAULT_AI_RATE_LIMIT_PER_MINUTE)), 60,
                per="organization"))
        return limits

    def body(self, serializer_class: type[drf_serializers.Serializer]) -> dict[str, Any]:
        return dict(validated_input(serializer_class, self.request.data).validated_data)


def bad_request(exc: drf_serializers.ValidationError) -> APIError:
    """Document 3, 4.2: a malformed chat or embeddings body answers 400."""
    issues = flatten_issues(exc.detail)
    return APIError("VALIDATION_ERROR",
                    issues[0]["message"] if len(issues) == 1 else "The request is not valid.",
                    status=400, details={"issues": issues})
