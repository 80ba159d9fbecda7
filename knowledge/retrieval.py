"""Hybrid retrieval over the organization's knowledge (Document 3, 4.2 `search`).

Two ranked lists over the same candidate set — the approved, `ready` chunks of the
requested bases of the current organization (the tenant manager scopes every query):

- vector: the query's embedding against the chunks' vectors by cosine — pgvector's HNSW
  index where the database has it, exact numpy over the stored float32 bytes elsewhere
  (knowledge/vectors.py);
- full text: on PostgreSQL the chunk's `tsvector` (GIN) against the query; chunks matching
  `websearch_to_tsquery` (every word, quoted phrases, `-exclusions`) rank first, then chunks
  matching any of the query's words, each group by `ts_rank_cd`. On SQLite (the embedded
  default) a BM25 score in Python over the candidates' text.

The lists are fused by reciprocal rank fusion (score = sum of 1 / (60 + rank) over the
lists a chunk is in). `threshold` drops hits whose cosine similarity is below it. Other
apps (the agents runtime) call `retrieve`.
"""

from __future__ import annotations

import math
import re
import time
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
from django.db import connection
from django.db.models import BooleanField, F, FloatField, IntegerField, Q
from django.db.models.expressions import RawSQL

from agents import engine
from platform_core.tenancy.models import Organization

from . import vectors
from .indexing import FTS_CONFIG
from .models import Chunk, IndexStatus, Moderation

RRF_K = 60
LIST_DEPTH = 50  # how deep each ranked list goes before fusion
DIMENSIONS = vectors.DIMENSIONS
MODES = ("hybrid", "vector", "text")
MAX_QUERY_TERMS = 32  # a long question's first 32 lexemes are plenty for the text list
COMMON_TTL = 300.0
_common_cache: dict[str, tuple[float, set[str]]] = {}
COMMON_SHARE = 0.02  # a lexeme in more chunks than this share is left out of the any-word list
MIN_SHOULD_MATCH = 0.6  # share of the query's lexemes a chunk must hold to enter the text list
_WORD = re.compile(r"\w+", re.UNICODE)


@dataclass(frozen=True)
class Hit:
    chunk_id: int
    document_id: str
    document_name: str
    document_type: str
    knowledge_base_id: str
    heading: str
    text: str
    score: float       # the fused (RRF) score
    similarity: float  # cosine similarity of the chunk to the query
    vector_rank: int | None
    text_rank: int | None


def retrievable_chunks(knowledge_base_ids: Iterable[str] | None = None):
    """The only chunks retrieval may read: their document is approved and ready."""
    chunks = Chunk.objects.filter(document__status=IndexStatus.READY,
                                  document__moderation_status=Moderation.APPROVED)
    if knowledge_base_ids is not None:
        chunks = chunks.filter(knowledge_base_id__in=list(knowledge_base_ids))
    return chunks


def vector_ranking(chunks, query_vector: np.ndarray, depth: int = LIST_DEPTH
                   ) -> list[tuple[int, float]]:
    """(chunk id, cosine similarity), best first."""
    return vectors.nearest(chunks, query_vector, depth)


def _lexemes(query: str) -> list[str]:
    """The query's normalised lexemes (stemmed, stop words dropped), as the index has them."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT array(SELECT unnest(tsvector_to_array("
                       "to_tsvector(%s::regconfig, %s))))", [FTS_CONFIG, query])
        return list(cursor.fetchone()[0] or [])


def _tsquery_term(lexeme: str) -> str:
    return "'" + lexeme.replace("\\", "\\\\").replace("'", "''") + "'"


def _common_lexemes() -> set[str]:
    """Lexemes in more than COMMON_SHARE of all chunks, from the planner's statistics of the
    tsvector column (`most_common_elems`, kept by ANALYZE): cheap, and empty before the
    first ANALYZE. They carry little rank information (low IDF) but each matches a large
    share of the table, so the any-word list leaves them out (the all-words list keeps
    them). Kept per process for COMMON_TTL seconds (statistics change at ANALYZE only)."""
    key = str(connection.settings_dict.get("NAME"))
    cached = _common_cache.get(key)
    if cached and time.monotonic() - cached[0] < COMMON_TTL:
        return cached[1]
    common = _read_common_lexemes()
    _common_cache[key] = (time.monotonic(), common)
    return common


def _read_common_lexemes() -> set[str]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT most_common_elems::text::text[], most_common_elem_freqs "
                       "FROM pg_stats WHERE tablename = 'knowledge_chunk' "
                       "AND attname = 'search_vector'")
        row = cursor.fetchone()
    if not row or not row[0]:
        return set()
    return {lexeme for lexeme, share in zip(row[0], row[1], strict=False)
            if share > COMMON_SHARE}


def _postgres_text_ranking(chunks, query: str, depth: int) -> list[int]:
    lexemes = _lexemes(query)[:MAX_QUERY_TERMS]
    if not lexemes:
        return []
    strict = RawSQL("knowledge_chunk.search_vector @@ websearch_to_tsquery(%s::regconfig, %s)",
                    (FTS_CONFIG, query), output_field=BooleanField())
    common = _common_lexemes()
    lexemes = [lexeme for lexeme in lexemes if lexeme not in common]
    if not lexemes:
        # Only common words: no lexical signal worth ranking thousands of rows for (their
        # IDF is near zero); the vector list carries such a query.
        return []
    terms = [_tsquery_term(lexeme) for lexeme in lexemes]
    loose = RawSQL("knowledge_chunk.search_vector @@ %s::tsquery", (" | ".join(terms),),
                   output_field=BooleanField())
    # One bound parameter per term; the SQL text is a constant repeated.
    matched_sql = " + ".join(["(knowledge_chunk.search_vector @@ %s::tsquery)::int"] * len(terms))
    matched = RawSQL(matched_sql, terms, output_field=IntegerField())  # noqa: S611
    rank = RawSQL("ts_rank_cd(knowledge_chunk.search_vector, %s::tsquery)",
                  (" | ".join(terms),), output_field=FloatField())
    enough = math.ceil(len(terms) * MIN_SHOULD_MATCH)
    return list(chunks.filter(loose).annotate(all_words=strict, matched=matched, rank=rank)
                .filter(Q(all_words=True) | Q(matched__gte=enough))
                .order_by(F("all_words").desc(), "-matched", "-rank", "id")
                .values_list("id", flat=True)[:depth])


# English stop words (a short list; PostgreSQL's `english` configuration drops the same).
_STOP_WORDS = """a about above after again against all am an and any are as at be because
been before being below between both but by can could did do does doing down during each few
for from further had has have having he her here hers herself him himself his how i if in
into is it its itself just me more most my myself no nor not now of off on once only or
other our ours ourselves out over own same she should so some such than that the their
theirs them themselves then there these they this those through to too under until up very
was we were what when where which while who whom why will with would you your yours
yourself yourselves"""
_STOP = frozenset(_STOP_WORDS.split())


def _stem(word: str) -> str:
    """A crude suffix stripper (colours/colour, cleaning/clean) standing in for Snowball."""
    for suffix in ("ing", "ed", "es", "s"):
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def _tokens(text: str) -> list[str]:
    return [_stem(w) for w in (m.lower() for m in _WORD.findall(text)) if w not in _STOP]


def _python_text_ranking(chunks, query: str, depth: int) -> list[int]:
    """The embedded default's full-text list, the PostgreSQL rules in Python: chunks holding
    every query word first, then those holding MIN_SHOULD_MATCH of them, each by BM25
    (k1 1.2, b 0.75) over the candidates."""
    terms = set(_tokens(query)[:MAX_QUERY_TERMS])
    if not terms:
        return []
    pattern = Q()
    for term in terms:  # a stem is a substring of its inflections
        pattern |= Q(text__icontains=term) | Q(heading__icontains=term)
    rows = list(chunks.filter(pattern).values_list("id", "heading", "text"))
    docs = [(chunk_id, Counter(_tokens(f"{heading} {text}"))) for chunk_id, heading, text
            in rows]
    enough = math.ceil(len(terms) * MIN_SHOULD_MATCH)
    docs = [(c, counts) for c, counts in docs if len(terms & counts.keys()) >= enough]
    if not docs:
        return []
    total = chunks.count()
    average = sum(sum(counts.values()) for _, counts in docs) / len(docs)
    frequency = {t: sum(1 for _, counts in docs if t in counts) for t in terms}
    scored = []
    for chunk_id, counts in docs:
        length = sum(counts.values())
        score = 0.0
        for term in terms & counts.keys():
            idf = math.log(1 + (total - frequency[term] + 0.5) / (frequency[term] + 0.5))
            tf = counts[term]
            score += idf * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * length / average))
        scored.append((not terms <= counts.keys(), -score, chunk_id))  # all words first
    scored.sort()
    return [chunk_id for _, _, chunk_id in scored[:depth]]


def text_ranking(chunks, query: str, depth: int = LIST_DEPTH) -> list[int]:
    """Chunk ids, best first (see the module docstring)."""
    if connection.vendor == "postgresql":
        return _postgres_text_ranking(chunks, query, depth)
    return _python_text_ranking(chunks, query, depth)


def fuse(*rankings: list[int]) -> dict[int, float]:
    scores: dict[int, float] = {}
    for ranking in rankings:
        for rank, chunk_id in enumerate(ranking, start=1):
            scores[chunk_id] = scores.get(chunk_id, 0.0) + 1.0 / (RRF_K + rank)
    return scores


def embed_query(organization: Organization, query: str, feature: str = "kb.search"
                ) -> np.ndarray:
    return np.asarray(engine.embed(organization, [query], feature=feature).vectors[0],
                      dtype="<f4")


def retrieve(organization: Organization, query: str, *,
             knowledge_base_ids: Iterable[str] | None = None, limit: int = 5,
             threshold: float | None = None, feature: str = "kb.search",
             mode: str = "hybrid", depth: int = LIST_DEPTH,
             query_vector: np.ndarray | None = None) -> list[Hit]:
    """The best `limit` chunks for `query` (`mode`: hybrid, vector or text). A caller that
    already embedded the query passes `query_vector` (nothing is metered again)."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}")
    chunks = retrievable_chunks(knowledge_base_ids)
    if query_vector is None:
        query_vector = embed_query(organization, query, feature)
    by_vector = vector_ranking(chunks, query_vector, depth) if mode != "text" else []
    by_text = text_ranking(chunks, query, depth) if mode != "vector" else []
    vector_ids = [chunk_id for chunk_id, _ in by_vector]
    scores = fuse(vector_ids, by_text)
    ordered = sorted(scores, key=lambda c: (-scores[c], c))
    # At most 2 x depth rows, read in one query.
    rows = {c.id: c for c in Chunk.objects.filter(id__in=ordered).select_related("document")}
    vector_rank = {c: i for i, c in enumerate(vector_ids, start=1)}
    text_rank = {c: i for i, c in enumerate(by_text, start=1)}
    hits: list[Hit] = []
    for chunk_id in ordered:
        chunk = rows.get(chunk_id)
        if chunk is None:  # deleted between the two reads
            continue
        vector = np.frombuffer(bytes(chunk.embedding), dtype="<f4")
        similarity = float(vector @ query_vector)
        if threshold is not None and similarity < threshold:
            continue
        hits.append(Hit(chunk_id=chunk.id, document_id=chunk.document_id,
                        document_name=chunk.document.name, document_type=chunk.document.type,
                        knowledge_base_id=chunk.knowledge_base_id, heading=chunk.heading,
                        text=chunk.text, score=round(scores[chunk_id], 6),
                        similarity=round(similarity, 4),
                        vector_rank=vector_rank.get(chunk_id),
                        text_rank=text_rank.get(chunk_id)))
        if len(hits) >= limit:
            break
    return hits
