"""Keyset pages for dashboard tables through the API's own cursor pagination (the same
signed cursors, the same keyset predicate, never OFFSET)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db.models import QuerySet
from django.http import HttpRequest

from platform_core.api.pagination import KeysetCursorPagination


class _Query:
    """What the paginator reads of a DRF request: the query string and the path."""

    def __init__(self, request: HttpRequest) -> None:
        self.query_params = request.GET
        self.path = request.path


@dataclass
class Page:
    rows: list[Any]
    next_cursor: str | None
    total: int | None


def keyset_page(request: HttpRequest, queryset: QuerySet, *, ordering: tuple[str, ...],
                limit: int = 25) -> Page:
    paginator = KeysetCursorPagination(ordering=ordering)
    paginator.default_limit = limit
    rows = paginator.paginate_queryset(queryset, _Query(request))
    return Page(rows=rows, next_cursor=paginator.next_cursor, total=paginator.total)
