"""The one exception handler: every failure becomes a registered code in the error envelope."""

from __future__ import annotations

import logging
from typing import Any

from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.core.exceptions import (
    RequestDataTooBig,
    SuspiciousOperation,
    TooManyFieldsSent,
    TooManyFilesSent,
)
from django.db import DatabaseError, DataError, IntegrityError
from django.http import Http404
from rest_framework import exceptions as drf
from rest_framework.response import Response

from platform_core.api.envelope import error_body
from platform_core.errors import APIError, validation_error

logger = logging.getLogger("platform_core.api")

NON_FIELD = "body"


def flatten_issues(detail: Any, prefix: str = "") -> list[dict[str, str]]:
    """Turn DRF's nested error detail into `[{field, message}]` with dotted field paths."""
    issues: list[dict[str, str]] = []
    if isinstance(detail, dict):
        for key, value in detail.items():
            name = NON_FIELD if key in ("non_field_errors", "__all__") else str(key)
            path = f"{prefix}.{name}" if prefix and name != NON_FIELD else (prefix or name)
            issues.extend(flatten_issues(value, path))
    elif isinstance(detail, list):
        if all(not isinstance(item, dict | list) for item in detail):
            issues.extend({"field": prefix or NON_FIELD, "message": str(m)} for m in detail)
        else:
            for index, item in enumerate(detail):
                if item:
                    issues.extend(
                        flatten_issues(item, f"{prefix}.{index}" if prefix else str(index))
                    )
    else:
        issues.append({"field": prefix or NON_FIELD, "message": str(detail)})
    return issues


def _from_drf(exc: drf.APIException) -> APIError:
    if isinstance(exc, drf.ValidationError):
        issues = flatten_issues(exc.detail)
        message = issues[0]["message"] if len(issues) == 1 else "The request is not valid."
        return APIError("VALIDATION_ERROR", message, status=422, details={"issues": issues})
    if isinstance(exc, drf.ParseError):
        detail = str(exc.detail)
        return APIError(
            "VALIDATION_ERROR",
            "The request body is not valid JSON." if detail.startswith("JSON")
            else "The request body could not be parsed.",
            status=400,
            details={"issues": [{"field": NON_FIELD, "message": detail}]},
        )
    if isinstance(exc, drf.NotAuthenticated | drf.AuthenticationFailed):
        return APIError("UNAUTHORIZED")
    if isinstance(exc, drf.PermissionDenied):
        return APIError("INSUFFICIENT_PERMISSIONS")
    if isinstance(exc, drf.NotFound):
        return APIError("NOT_FOUND")
    if isinstance(exc, drf.MethodNotAllowed):
        return APIError("METHOD_NOT_ALLOWED", str(exc.detail))
    if isinstance(exc, drf.NotAcceptable):
        return APIError("NOT_ACCEPTABLE")
    if isinstance(exc, drf.UnsupportedMediaType):
        return APIError("UNSUPPORTED_MEDIA_TYPE", str(exc.detail))
    if isinstance(exc, drf.Throttled):
        wait = int(exc.wait or 1)
        return APIError("RATE_LIMITED", headers={"Retry-After": str(max(wait, 1))})
    return (
        APIError("INTERNAL_ERROR", status=exc.status_code)
        if exc.status_code >= 500
        else (APIError("VALIDATION_ERROR", str(exc.detail), status=exc.status_code))
    )


def to_api_error(exc: Exception) -> APIError:
    if isinstance(exc, APIError):
        return exc
    if isinstance(exc, drf.APIException):
        return _from_drf(exc)
    if isinstance(exc, Http404):
        return APIError("NOT_FOUND")
    if isinstance(exc, DjangoPermissionDenied):
        return APIError("INSUFFICIENT_PERMISSIONS")
    if isinstance(exc, RequestDataTooBig):
        return APIError("PAYLOAD_TOO_LARGE")
    if isinstance(exc, TooManyFieldsSent | TooManyFilesSent):
        return validation_error(NON_FIELD, "The request has too many form fields or files.",
                                status=400)
    if isinstance(exc, SuspiciousOperation):  # what Django refuses to read: never a 500
        logger.warning("suspicious request answered 400: %s", type(exc).__name__)
        return validation_error(NON_FIELD, "The request could not be understood.", status=400)
    if isinstance(exc, IntegrityError):
        logger.warning("integrity error answered as conflict: %s", exc)
        return APIError("ALREADY_EXISTS")
    if isinstance(exc, DataError):
        # A value the database cannot hold (a NUL in text or JSON, a number out of range):
        # the caller's input, whichever field carried it; the write was rolled back.
        logger.warning("data error answered as validation error: %s", exc)
        return validation_error(NON_FIELD, "A value cannot be stored: it is out of range or "
                                           "contains a character the database does not accept "
                                           "(such as \\u0000).")
    if isinstance(exc, DatabaseError):
        logger.exception("database error", exc_info=exc)
        return APIError("DB_ERROR")
    logger.exception("unhandled error", exc_info=exc)
    return APIError("INTERNAL_ERROR")


def error_response(request, error: APIError) -> Response:
    response = Response(
        error_body(request, error.code, error.message, status=error.status, details=error.details),
        status=error.status,
        headers=error.headers,
    )
    response.enveloped = True
    return response


def exception_handler(exc: Exception, context: dict) -> Response:
    request = context.get("request")
    return error_response(request, to_api_error(exc))
