"""The response envelopes of Document 1, 2.1: `{data, meta}` and `{error, meta}`.

The only code that builds them; views return plain data and raise `APIError`.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from django.conf import settings
from django.http import HttpRequest

from platform_core import errors
from platform_core.api.middleware import request_id_of


def _now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def meta_for(request: HttpRequest | None, **extra: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {
        "request_id": request_id_of(request) if request is not None else "",
        "timestamp": _now_iso(),
    }
    meta.update(extra)
    return meta


def success_body(data: Any, request: HttpRequest | None, **meta_extra: Any) -> dict[str, Any]:
    return {"data": data, "meta": meta_for(request, **meta_extra)}


def docs_url_for(code: str) -> str:
    return f"{settings.DOCS_URL}/errors/{code}"


def error_body(
    request: HttpRequest | None,
    code: str,
    message: str | None = None,
    *,
    status: int | None = None,
    details: dict[str, Any] | None = None,
) -> dict[str, Any]:
    entry = errors.get(code)
    return {
        "error": {
            "code": code,
            "message": message or entry.message,
            "status": status or entry.status,
            "details": details or {},
        },
        "meta": meta_for(request, docs_url=docs_url_for(code)),
    }
