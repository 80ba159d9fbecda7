"""Keyset pages for dashboard lists: the API's own paginator (signed cursor bound to the
filters, keyset predicate, capped total) read from a plain Django request."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

from django.db.models import QuerySet
from django.http import HttpRequest

from platform_core.api.pagination import KeysetCursorPagination


@dataclass
class Page:
    rows: list[Any]
    next_url: str | None
    total: int | None
    filters: dict[str, str] = field(default_factory=dict)


class _QueryRequest:
    """What the paginator reads of a DRF request: `query_params` and `path`."""

    def __init__(self, request: HttpRequest) -> None:
        self.query_params = request.GET
        self.path = request.path


def keyset_page(request: HttpRequest, queryset: QuerySet, *, limit: int = 25,
                ordering: tuple[str, ...] = ("-id",)) -> Page:
    """One page of `queryset` newest first; `next_url` carries the same filters and the
    cursor (a bad or foreign cursor raises APIError INVALID_CURSOR, shown by the view)."""
    paginator = KeysetCursorPagination(ordering=ordering)
    paginator.default_limit = limit
    rows = paginator.paginate_queryset(queryset, _QueryRequest(request))
    filters = {k: v for k, v in request.GET.items() if k not in ("cursor", "limit") and v}
    next_url = None
    if paginator.next_cursor:
        params = [(k, v) for k, values in request.GET.lists() if k != "cursor" for v in values]
        next_url = f"{request.path}?{urlencode([*params, ('cursor', paginator.next_cursor)])}"
    return Page(rows=rows, next_url=next_url, total=paginator.total, filters=filters)
