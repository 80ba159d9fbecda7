"""Keyset pages for dashboard lists through the API's own paginator: the same signed
cursors bound to the filters, the same keyset predicate, the capped total, never OFFSET.
A bad or foreign cursor raises the API's INVALID_CURSOR, which DashboardView shows."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

from django.db.models import QuerySet
from django.http import HttpRequest, QueryDict

from platform_core.api.pagination import KeysetCursorPagination


@dataclass(frozen=True)
class _Query:
    """What the paginator reads of a DRF request: the query string and the path."""

    query_params: QueryDict
    path: str


@dataclass
class Page:
    rows: list[Any]
    next_cursor: str | None
    total: int | None
    next_url: str | None = None
    filters: dict[str, str] = field(default_factory=dict)


def paginate(queryset: QuerySet, query_params: QueryDict, path: str, *, limit: int,
             ordering: tuple[str, ...] = ("-id",)) -> tuple[list[Any], KeysetCursorPagination]:
    """The rows of `queryset` as if `query_params` were asked of `path` (the cursor is
    bound to both), and the paginator holding `next_cursor` and `total`."""
    paginator = KeysetCursorPagination(ordering=ordering)
    paginator.default_limit = limit
    return paginator.paginate_queryset(queryset, _Query(query_params, path)), paginator


def keyset_page(request: HttpRequest, queryset: QuerySet, *, limit: int = 25,
                ordering: tuple[str, ...] = ("-id",)) -> Page:
    """One page of `queryset` for this request's filters; `next_url` keeps them."""
    rows, paginator = paginate(queryset, request.GET, request.path, limit=limit,
                               ordering=ordering)
    next_url = None
    if paginator.next_cursor:
        params = [(k, v) for k, values in request.GET.lists() if k != "cursor" for v in values]
        next_url = f"{request.path}?{urlencode([*params, ('cursor', paginator.next_cursor)])}"
    filters = {k: v for k, v in request.GET.items() if k not in ("cursor", "limit") and v}
    return Page(rows=rows, next_cursor=paginator.next_cursor, total=paginator.total,
                next_url=next_url, filters=filters)
