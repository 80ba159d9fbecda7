"""The developers area's sub-navigation: each tab open to the roles the API opens it to."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse

from platform_core.identity.api.views import APIKeyViewSet

from .common import ApiRulesView, Tab

TABS = [
    Tab("keys", "API keys", "/dashboard/developers/api-keys",
        APIKeyViewSet.required_scopes["GET"], APIKeyViewSet.required_roles["GET"]),
    Tab("webhooks", "Webhooks", "/dashboard/developers/webhooks", "webhooks:read"),
    Tab("events", "Event feed", "/dashboard/developers/events", "events:read"),
]
# The OpenAPI documentation (Swagger UI) the project serves.
API_DOCS_URL = "/api/docs"


class DevelopersView(ApiRulesView):
    tabs = TABS

    def page(self, request: HttpRequest, template: str, context: dict[str, Any],
             *, status: int = 200) -> HttpResponse:
        return super().page(request, template, {"api_docs_url": API_DOCS_URL, **context},
                            status=status)
