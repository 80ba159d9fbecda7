"""Envelope answers for what never reaches a DRF view: unknown routes and crashes."""

from __future__ import annotations

import logging

from django.http import HttpRequest, HttpResponse

from .envelope import error_body
from .renderers import dumps

logger = logging.getLogger("platform_core.api")


def envelope_error(request: HttpRequest, code: str, message: str | None = None) -> HttpResponse:
    body = error_body(request, code, message)
    return HttpResponse(
        dumps(body), status=body["error"]["status"], content_type="application/json"
    )


def route_not_found(request: HttpRequest, *args, **kwargs) -> HttpResponse:
    return envelope_error(request, "NOT_FOUND", "No such route.")


def handler404(request: HttpRequest, exception=None) -> HttpResponse:
    return envelope_error(request, "NOT_FOUND")


def handler500(request: HttpRequest) -> HttpResponse:
    return envelope_error(request, "INTERNAL_ERROR")


def handler400(request: HttpRequest, exception=None) -> HttpResponse:
    return envelope_error(request, "VALIDATION_ERROR", "The request could not be understood.")


def handler403(request: HttpRequest, exception=None) -> HttpResponse:
    return envelope_error(request, "INSUFFICIENT_PERMISSIONS")
