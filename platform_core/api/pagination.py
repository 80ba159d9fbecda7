"""Pagination: keyset cursors (the default) and offset pages for the offset families.

Cursor style (Document 1, 2.2 and 8): `meta.pagination = {cursor, has_more, total?}`.
The cursor is an opaque, signed token holding the last row's ordering values, a
fingerprint of the filters and its issue time; a malformed, altered, stale or
filter-mismatched cursor answers 400 `INVALID_CURSOR`. Pages are read with a keyset
predicate (never OFFSET), so a deep page costs what the first one does. `total` is given
when cheap: counting stops at `TOTAL_COUNT_CAP` rows.
"""

from __future__ import annotations

import datetime
import hashlib
from typing import Any

from django.core import signing
from django.db.models import Q, QuerySet
from rest_framework.pagination import BasePagination

from platform_core.errors import APIError, validation_error

CURSOR_MAX_AGE_SECONDS = 24 * 3600
TOTAL_COUNT_CAP = 1000
_SALT = "platform.cursor.v1"


def parse_limit(request, *, default: int, maximum: int) -> int:
    raw = request.query_params.get("limit")
    if raw in (None, ""):
        return default
    try:
        value = int(raw)
    except ValueError:
        raise validation_error("limit", "limit must be an integer.", status=400) from None
    if value < 1:
        raise validation_error("limit", "limit must be at least 1.", status=400)
    return min(value, maximum)


def _encode_value(value: Any) -> Any:
    if isinstance(value, datetime.datetime):
        return {"dt": value.isoformat()}
    return value


def _decode_value(value: Any) -> Any:
    if isinstance(value, dict) and "dt" in value:
        return datetime.datetime.fromisoformat(value["dt"])
    return value


def _filters_fingerprint(request) -> str:
    items = sorted(
        (k, v)
        for k, values in request.query_params.lists()
        for v in values
        if k not in ("cursor", "limit")
    )
    # The path too: a cursor of one list is refused by another.
    return hashlib.sha256(repr((request.path.rstrip("/"), items)).encode()).hexdigest()[:16]


def encode_cursor(request, values: list[Any]) -> str:
    """An opaque cursor holding `values`, bound to the request's filters."""
    payload = {"v": [_encode_value(v) for v in values], "f": _filters_fingerprint(request)}
    return signing.dumps(payload, salt=_SALT, compress=True)


def decode_cursor(request, token: str, *, size: int) -> list[Any]:
    """The values of a cursor from `encode_cursor`; 400 INVALID_CURSOR when malformed,
    altered, older than a day, made for other filters or of another shape."""
    try:
        payload = signing.loads(token, salt=_SALT, max_age=CURSOR_MAX_AGE_SECONDS)
    except signing.SignatureExpired:
        raise APIError("INVALID_CURSOR", "The cursor has expired; start again.") from None
    except (signing.BadSignature, ValueError, TypeError):
        raise APIError("INVALID_CURSOR") from None
    if (
        not isinstance(payload, dict)
        or payload.get("f") != _filters_fingerprint(request)
        or not isinstance(payload.get("v"), list)
        or len(payload["v"]) != size
    ):
        raise APIError("INVALID_CURSOR", "The cursor does not belong to these filters.")
    return [_decode_value(v) for v in payload["v"]]


def cursor_page_response(data: Any, *, cursor: str | None, has_more: bool,
                         total: int | None = None):
    """A cursor-paginated answer: `data`, with `meta.pagination` filled by the renderer."""
    from rest_framework.response import Response

    pagination: dict[str, Any] = {"cursor": cursor, "has_more": has_more}
    if total is not None:
        pagination["total"] = total
    response = Response(data)
    response.envelope_meta = {"pagination": pagination}
    return response


class KeysetCursorPagination(BasePagination):
    """Reusable keyset pagination. `ordering` names unique-ending fields, e.g. ("-id",)."""

    default_limit = 25
    max_limit = 200
    ordering: tuple[str, ...] = ("-id",)

    def __init__(self, *, ordering: tuple[str, ...] | None = None, max_limit: int | None = None):
        if ordering:
            self.ordering = ordering
        if max_limit:
            self.max_limit = max_limit

    def _after(self, values: list[Any]) -> Q:
        """Rows strictly after `values` in the ordering (the keyset predicate)."""
        condition = Q()
        for i, field in enumerate(self.ordering):
            name = field.lstrip("-")
            op = "lt" if field.startswith("-") else "gt"
            branch = Q(**{f"{name}__{op}": values[i]})
            for j in range(i):
                branch &= Q(**{self.ordering[j].lstrip("-"): values[j]})
            condition |= branch
        return condition

    def paginate_queryset(self, queryset: QuerySet, request, view=None) -> list:
        self.request = request
        limit = parse_limit(request, default=self.default_limit, maximum=self.max_limit)
        token = request.query_params.get("cursor")
        ordered = queryset.order_by(*self.ordering)
        page_qs = (
            ordered.filter(self._after(decode_cursor(request, token, size=len(self.ordering))))
            if token
            else ordered
        )
        rows = list(page_qs[: limit + 1])
        self.has_more = len(rows) > limit
        rows = rows[:limit]
        self.next_cursor = None
        if self.has_more and rows:
            last = rows[-1]
            self.next_cursor = encode_cursor(
                request, [getattr(last, f.lstrip("-")) for f in self.ordering]
            )
        self.total = None
        if not token:
            if not self.has_more:
                self.total = len(rows)
            else:
                # Unordered and capped: PostgreSQL stops after TOTAL_COUNT_CAP + 1 index rows.
                capped = queryset.order_by().values("pk")[: TOTAL_COUNT_CAP + 1].count()
                self.total = capped if capped <= TOTAL_COUNT_CAP else None
        return rows

    def get_paginated_response(self, data):
        return cursor_page_response(
            data, cursor=self.next_cursor, has_more=self.has_more, total=self.total
        )

    def get_paginated_response_schema(self, schema: dict) -> dict:
        return schema

    def get_schema_operation_parameters(self, view) -> list[dict]:
        return [
            {
                "name": "limit",
                "in": "query",
                "required": False,
                "schema": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": self.max_limit,
                    "default": self.default_limit,
                },
            },
            {
                "name": "cursor",
                "in": "query",
                "required": False,
                "schema": {"type": "string"},
                "description": "Opaque cursor from meta.pagination.",
            },
        ]


class OffsetPagination(BasePagination):
    """Offset pages for the offset families: `data = {items, total, limit, offset}`."""

    default_limit = 25
    max_limit = 200
    max_offset = 10_000

    def paginate_queryset(self, queryset: QuerySet, request, view=None) -> list:
        self.limit = parse_limit(request, default=self.default_limit, maximum=self.max_limit)
        raw = request.query_params.get("offset") or "0"
        try:
            self.offset = int(raw)
        except ValueError:
            raise validation_error("offset", "offset must be an integer.", status=400) from None
        if self.offset < 0 or self.offset > self.max_offset:
            raise validation_error(
                "offset", f"offset must be between 0 and {self.max_offset}.", status=400
            )
        self.total = queryset.count() if hasattr(queryset, "query") else len(queryset)
        return list(queryset[self.offset : self.offset + self.limit])

    def get_paginated_response(self, data):
        from rest_framework.response import Response

        return Response(
            {"items": data, "total": self.total, "limit": self.limit, "offset": self.offset}
        )

    def get_paginated_response_schema(self, schema: dict) -> dict:
        return {
            "type": "object",
            "properties": {
                "items": schema,
                "total": {"type": "integer"},
                "limit": {"type": "integer"},
                "offset": {"type": "integer"},
            },
        }
