"""RFC 7644 section 3.12 error bodies, on django-scim2's SCIMException.

Two things the package's exception does not carry and we need: `status` as a string (RFC
7644 3.12 types it so; the package sends a number) and response headers (the platform code
rides in `X-Error-Code`, since the SCIM error schema has no member for it, plus
`WWW-Authenticate`, `Allow` and `Retry-After`)."""

from __future__ import annotations

import json

from django.http import HttpResponse
from django_scim.constants import SCIM_CONTENT_TYPE
from django_scim.exceptions import SCIMException

CONTENT_TYPE = SCIM_CONTENT_TYPE


class ScimError(SCIMException):
    def __init__(
        self,
        status: int,
        detail: str,
        scim_type: str | None = None,
        *,
        code: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(detail, status=status, scim_type=scim_type)
        self.code = code
        self.headers = headers or {}

    @classmethod
    def from_package(cls, exc: SCIMException) -> ScimError:
        """One of the package's own exceptions (bad JSON, a 404 of its lookup, ...)."""
        if isinstance(exc, ScimError):
            return exc
        code = {404: "NOT_FOUND", 409: "ALREADY_EXISTS"}.get(int(exc.status))
        return cls(int(exc.status), exc.detail or "SCIM request failed.", exc.scim_type, code=code)

    def to_dict(self) -> dict:
        body = {"schemas": self.schemas, "status": str(self.status), "detail": self.detail}
        if self.scim_type:
            body["scimType"] = self.scim_type
        return body

    def response(self) -> HttpResponse:
        response = HttpResponse(
            json.dumps(self.to_dict()), status=int(self.status), content_type=CONTENT_TYPE
        )
        if self.code:
            response["X-Error-Code"] = self.code
        for name, value in self.headers.items():
            response[name] = value
        return response


def invalid_value(detail: str) -> ScimError:
    return ScimError(400, detail, "invalidValue")


def not_found(detail: str = "Resource not found.") -> ScimError:
    return ScimError(404, detail, code="NOT_FOUND")


def uniqueness(detail: str) -> ScimError:
    return ScimError(409, detail, "uniqueness", code="ALREADY_EXISTS")


def ceiling(detail: str) -> ScimError:
    return ScimError(403, detail, code="SCIM_ROLE_CEILING_EXCEEDED")
