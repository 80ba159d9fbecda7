"""RFC 7644 section 3.12 error bodies. The platform code, when there is one, rides in the
`X-Error-Code` header (the SCIM error schema has no member for it)."""

from __future__ import annotations

import json

from django.http import HttpResponse

ERROR_SCHEMA = "urn:ietf:params:scim:api:messages:2.0:Error"
CONTENT_TYPE = "application/scim+json"


class ScimError(Exception):
    def __init__(
        self,
        status: int,
        detail: str,
        scim_type: str | None = None,
        *,
        code: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail
        self.scim_type = scim_type
        self.code = code
        self.headers = headers or {}

    def response(self) -> HttpResponse:
        body = {"schemas": [ERROR_SCHEMA], "status": str(self.status), "detail": self.detail}
        if self.scim_type:
            body["scimType"] = self.scim_type
        response = HttpResponse(json.dumps(body), status=self.status, content_type=CONTENT_TYPE)
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
