"""`GET /l/<code>`: a tracked short link (0-conventions.md section 6).

Answers 302 to the link's target and records the click (`messaging.links.services
.record_click`, with the user agent and client address). Public: the code is the key and
carries the organization. An unknown code answers the 404 envelope. Mounted at the root
(not under /api/v1) by config/urls.py:

    path("l/<str:code>", ShortLinkRedirectView.as_view(), name="short-link"),
"""

from __future__ import annotations

from django.http import HttpResponseRedirect
from drf_spectacular.utils import OpenApiResponse, extend_schema

from messaging.links.selectors import link_by_code
from messaging.links.services import record_click
from platform_core.api.authentication import client_ip
from platform_core.api.views import PublicAPIView
from platform_core.errors import APIError


class ShortLinkRedirectView(PublicAPIView):
    idempotent_posts = False

    @extend_schema(
        auth=[], responses={302: OpenApiResponse(description="Redirect to the target URL."),
                            404: OpenApiResponse(description="Unknown code.")},
        description="Follow a tracked short link: 302 to its target; the click is recorded.",
    )
    def get(self, request, code: str):
        link = link_by_code(code) if len(code) <= 32 else None
        if link is None:
            raise APIError("NOT_FOUND", "No such link.")
        record_click(link=link, user_agent=request.META.get("HTTP_USER_AGENT", ""),
                     ip=client_ip(request))
        response = HttpResponseRedirect(link.target_url)
        response["Cache-Control"] = "no-store"
        response["Referrer-Policy"] = "no-referrer"
        return response
