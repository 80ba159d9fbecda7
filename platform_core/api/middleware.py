"""Request id: every response carries `X-Request-Id`, the same value as `meta.request_id`."""

from __future__ import annotations

import re
from collections.abc import Callable

from django.http import HttpRequest, HttpResponse

from platform_core.ids import new_id

_ACCEPTABLE_INBOUND = re.compile(r"^[A-Za-z0-9_\-.:]{8,80}$")


def request_id_of(request: HttpRequest) -> str:
    rid = getattr(request, "request_id", None)
    if rid is None:
        rid = request.request_id = new_id("req")
    return rid


class RequestIdMiddleware:
    """Adopts a well-formed inbound X-Request-Id from the proxy, otherwise mints one."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        inbound = request.META.get("HTTP_X_REQUEST_ID", "")
        request.request_id = inbound if _ACCEPTABLE_INBOUND.match(inbound) else new_id("req")
        response = self.get_response(request)
        response["X-Request-Id"] = request.request_id
        return response
