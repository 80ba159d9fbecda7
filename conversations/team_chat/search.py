"""Full-text search over the caller's channels and DMs (PostgreSQL full text, the GIN
expression index of migration 0002 over to_tsvector('english', body)).

Ranked by relevance (ts_rank) then recency (id, time-ordered); pages follow a keyset on
(rank, id) held in the shared opaque cursor, so a client passes `cursor` back verbatim.
`websearch` syntax: words, "quoted phrases", `-excluded`, `or`. Snippets mark the
matching words with `<mark>…</mark>` (the body is not HTML-escaped: render it as text).

The embedded SQLite run has no text search: there every word must appear in the body
(case-insensitive), newest first, rank 0, snippet = the start of the body.
"""

from __future__ import annotations

from django.contrib.postgres.search import (
    SearchHeadline,
    SearchQuery,
    SearchRank,
    SearchVectorField,
)
from django.db import connection
from django.db.models import F, FloatField, Func, Q, Value
from django.db.models.functions import Cast

from platform_core.api.pagination import decode_cursor, encode_cursor

from .models import SEARCH_CONFIG, ChannelMember, ChatMessage, DMThread


class _BodyVector(Func):
    """to_tsvector over the body with the configuration as a literal, exactly the GIN
    index's expression (a bound parameter would not match it under server-side binding)."""

    template = f"to_tsvector('{SEARCH_CONFIG}'::regconfig, COALESCE(%(expressions)s, ''))"
    output_field = SearchVectorField()


def search(request, *, user_id: str, q: str, limit: int, cursor: str | None
           ) -> tuple[list[tuple[ChatMessage, float, str]], str | None]:
    channels = ChannelMember.objects.filter(user_id=user_id).values("channel_id")
    threads = DMThread.objects.filter(Q(user_low_id=user_id) | Q(user_high_id=user_id)
                                      ).values("pk")
    qs = (ChatMessage.objects.filter(deleted_at__isnull=True)
          .filter(Q(channel_id__in=channels) | Q(dm_thread_id__in=threads))
          .select_related("sender_user"))
    if connection.vendor != "postgresql":
        return _search_plain(request, qs, q=q, limit=limit, cursor=cursor)
    query = SearchQuery(q, config=SEARCH_CONFIG, search_type="websearch")
    vector = _BodyVector(F("body"))
    # Double precision: the cursor's rank must compare equal to the recomputed one.
    rank = Cast(SearchRank(vector, query), FloatField())
    qs = qs.annotate(document=vector).filter(document=query).annotate(rank=rank)
    if cursor:
        after_rank, after_id = decode_cursor(request, cursor, size=2)
        qs = qs.filter(Q(rank__lt=after_rank) | Q(rank=after_rank, id__lt=after_id))
    rows = list(qs.order_by("-rank", "-id")[: limit + 1])
    has_more = len(rows) > limit
    rows = rows[:limit]
    snippets = dict(
        ChatMessage.objects.filter(pk__in=[r.pk for r in rows])
        .annotate(snippet=SearchHeadline("body", query, config=SEARCH_CONFIG,
                                         start_sel="<mark>", stop_sel="</mark>",
                                         max_words=30, min_words=10, max_fragments=2))
        .values_list("pk", "snippet")) if rows else {}
    next_cursor = encode_cursor(request, [rows[-1].rank, rows[-1].pk]) if has_more else None
    return [(r, r.rank, snippets.get(r.pk, "")) for r in rows], next_cursor


def _search_plain(request, qs, *, q: str, limit: int, cursor: str | None
                  ) -> tuple[list[tuple[ChatMessage, float, str]], str | None]:
    for word in q.split()[:10]:
        qs = qs.filter(body__icontains=word.strip('"'))
    if cursor:
        (after_id,) = decode_cursor(request, cursor, size=1)
        qs = qs.filter(id__lt=after_id)
    rows = list(qs.annotate(rank=Value(0.0, output_field=FloatField())).order_by("-id")
                [: limit + 1])
    has_more = len(rows) > limit
    rows = rows[:limit]
    next_cursor = encode_cursor(request, [rows[-1].pk]) if has_more else None
    return [(r, 0.0, r.body[:200]) for r in rows], next_cursor
