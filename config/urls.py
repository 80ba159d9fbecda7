"""Root routes. Each app owns its `api/urls.py`; this file only mounts them."""

import os

from django.contrib import admin
from django.urls import include, path, re_path
from django.views.generic import RedirectView
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from messaging.api.links import ShortLinkRedirectView
from platform_core import docs_views
from platform_core.api import django_handlers
from platform_core.api.routing import indexed_include
from platform_core.health import HealthView, ReadyView

api_v1 = [
    path("", include("platform_core.identity.api.urls")),
    path("", include("platform_core.files.api.urls")),
    path("", include("platform_core.events.api.urls")),
    path("", include("platform_core.webhooks.api.urls")),
    path("", include("platform_core.accounts.api.urls")),
    path("", include("platform_core.sso.api.urls")),
    # Segment routes first: /contacts/segments/... must win over /contacts/{id}.
    path("", include("contacts.segments.api.urls")),
    path("", include("contacts.api.urls")),
    # Template routes first: /messages/templates/... must win over /messages/{id}.
    path("", include("templates.api.urls")),
    path("", include("messaging.providers.api.urls")),
    path("", include("messaging.numbers.api.urls")),
    path("", include("messaging.numbers.network.api.urls")),
    path("", include("messaging.verify.api.urls")),
    path("", include("messaging.whatsapp.api.urls")),
    path("", include("messaging.rcs.api.urls")),
    path("", include("messaging.inbound.urls")),
    path("", include("messaging.api.urls")),
    path("", include("conversations.api.urls")),
    path("", include("recordings.api.urls")),
    path("", include("voice.api.urls")),
    path("", include("ads.api.urls")),
    path("", include("conversations.team_chat.api.urls")),
    path("", include("agents.ai.api.urls")),
    path("", include("agents.api.urls")),
    path("", include("knowledge.api.urls")),
    path("", include("loyalty.api.urls")),
    path("", include("insights.api.urls")),
]

urlpatterns = [
    # The schema before the API include (its path is under api/v1/); the API itself comes
    # next because it takes nearly every request and resolution walks the list in order.
    path("api/v1/schema", SpectacularAPIView.as_view(), name="schema"),
    indexed_include("api/v1/", api_v1),  # resolved by first segment (api/routing.py)
    path("health", HealthView.as_view(), name="health"),
    path("ready", ReadyView.as_view(), name="ready"),
    path("api/docs", SpectacularSwaggerView.as_view(url_name="schema"), name="api-docs"),
    path("errors/<str:code>", docs_views.error_code_redirect, name="error-code"),
    path("reference/error-codes", docs_views.error_code_listing, name="error-codes"),
    path("admin", RedirectView.as_view(url="/admin/", permanent=False)),
    path("admin/", admin.site.urls),
    # SAML and SCIM sit at the root, without /api/v1 (Document 1, 4.2 and 4.3).
    path("", include("platform_core.sso.root_urls")),
    # The dashboard (server-rendered, session cookie): dashboard/urls.py.
    path("dashboard", RedirectView.as_view(url="/dashboard/", permanent=False)),
    path("dashboard/", include("dashboard.urls")),
    # Tracked short links (0-conventions 6: `/l/<code>` answers 302 and records the click).
    path("l/<str:code>", ShortLinkRedirectView.as_view(), name="short-link"),
    # Anything else answers the 404 envelope, whatever DEBUG says.
    re_path(r"^.*$", django_handlers.route_not_found),
]

# `make bench` only: the framework's floor (a bare DRF view) in the same server.
if os.environ.get("BENCH_FLOOR") == "1":
    from bench.floor import FloorView

    urlpatterns.insert(0, path("bench/floor", FloorView.as_view(), name="bench-floor"))

handler400 = "platform_core.api.django_handlers.handler400"
handler403 = "platform_core.api.django_handlers.handler403"
handler404 = "platform_core.api.django_handlers.handler404"
handler500 = "platform_core.api.django_handlers.handler500"
