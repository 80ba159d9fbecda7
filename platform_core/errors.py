"""The one error registry.

Every error code the API can answer is registered here once, with its HTTP status, default
message and documentation text; each app registers its own codes in its `error_codes.py`
(imported from its AppConfig.ready). Code raises `APIError("CODE", ...)`; the exception
handler renders it into the error envelope. An unregistered code is a programming error.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ErrorCode:
    code: str
    status: int
    message: str
    description: str
    app: str


_REGISTRY: dict[str, ErrorCode] = {}


def register(code: str, status: int, message: str, description: str = "", *, app: str) -> None:
    existing = _REGISTRY.get(code)
    if existing and (existing.status, existing.app) != (status, app):
        raise ValueError(f"error code {code} registered twice with different meaning")
    _REGISTRY[code] = ErrorCode(code, status, message, description or message, app)


def get(code: str) -> ErrorCode:
    try:
        return _REGISTRY[code]
    except KeyError:
        raise KeyError(f"error code {code!r} is not registered") from None


def all_codes() -> list[ErrorCode]:
    return sorted(_REGISTRY.values(), key=lambda e: e.code)


class APIError(Exception):
    """Raise anywhere below a view to answer a registered error.

    `status` overrides the registered one only where the documents give a code several
    statuses (for example VALIDATION_ERROR as 400 or 422).
    """

    def __init__(
        self,
        code: str,
        message: str | None = None,
        *,
        details: dict[str, Any] | None = None,
        status: int | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        entry = get(code)
        self.code = code
        self.status = status or entry.status
        self.message = message or entry.message
        self.details = details or {}
        self.headers = headers or {}
        super().__init__(f"{code}: {self.message}")


def validation_error(
    field: str, message: str, *, status: int = 422, code: str = "VALIDATION_ERROR"
) -> APIError:
    """A validation failure naming one field, in the documented `issues` shape."""
    return APIError(
        code, message, status=status, details={"issues": [{"field": field, "message": message}]}
    )


class ValidationIssues:
    """Collects `{field, message}` issues and raises one VALIDATION_ERROR listing them all
    (the documented `issues` shape); `summary` is the message when there is more than one."""

    def __init__(self, summary: str = "The request is not valid.") -> None:
        self.summary = summary
        self.items: list[dict[str, str]] = []

    def add(self, field: str, message: str) -> None:
        self.items.append({"field": field, "message": message})

    def raise_if_any(self) -> None:
        if self.items:
            message = self.items[0]["message"] if len(self.items) == 1 else self.summary
            raise APIError("VALIDATION_ERROR", message, status=422,
                           details={"issues": self.items})
