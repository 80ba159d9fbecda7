"""Hybrid retrieval over the organization's knowledge (Document 3, 4.2 `search`).

Two ranked lists over the same candidate set — the approved, `ready` chunks of the
requested bases of the current organization (the tenant manager scopes every query):

- vector: exact cosine similarity in numpy between the query's embedding and every
  candidate's stored vector (vectors are L2-normalised, so a dot product);
- full text: PostgreSQL `websearch_to_tsquery` against the chunk's `tsvector` (GIN),
  ranked by `ts_rank_cd`;

fused by reciprocal rank fusion (score = sum of 1 / (60 + rank) over the lists a chunk is
in). `threshold` drops hits whose cosine similarity is below it. Agents use `retrieve`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
from django.contrib.postgres.search import SearchQuery, SearchRank
from django.db.models import F

from agents import engine
from platform_core.tenancy.models import Organization

from .indexing import FTS_CONFIG
from .models import Chunk, IndexStatus, Moderation

RRF_K = 60
LIST_DEPTH = 50  # how deep each ranked list goes before fusion
DIMENSIONS = 384


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
    rows = list(chunks.values_list("id", "embedding"))
    if not rows:
        return []
    ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
    matrix = np.frombuffer(b"".join(bytes(r[1]) for r in rows), dtype="<f4").reshape(
        len(rows), -1)
    similarities = matrix @ query_vector.astype("<f4")
    top = np.argsort(-similarities, kind="stable")[:depth]
    return [(int(ids[i]), float(similarities[i])) for i in top]


def text_ranking(chunks, query: str, depth: int = LIST_DEPTH) -> list[int]:
    tsquery = SearchQuery(query, search_type="websearch", config=FTS_CONFIG)
    return list(chunks.filter(search_vector=tsquery)
                .annotate(rank=SearchRank(F("search_vector"), tsquery, cover_density=True))
                .order_by("-rank", "id").values_list("id", flat=True)[:depth])


def fuse(*rankings: list[int]) -> dict[int, float]:
    scores: dict[int, float] = {}
    for ranking in rankings:
        for rank, chunk_id in enumerate(ranking, start=1):
            scores[chunk_id] = scores.get(chunk_id, 0.0) + 1.0 / (RRF_K + rank)
    return scores


def retrieve(organization: Organization, query: str, *,
             knowledge_base_ids: Iterable[str] | None = None, limit: int = 5,
             threshold: float | None = None, feature: str = "kb.search",
             mode: str = "hybrid") -> list[Hit]:
    """The best `limit` chunks for `query` (`mode`: hybrid, vector or text)."""
    chunks = retrievable_chunks(knowledge_base_ids)
    query_vector = np.asarray(engine.embed(organization, [query], feature=feature).vectors[0],
                              dtype="<f4")
    by_vector = vector_ranking(chunks, query_vector) if mode != "text" else []
    by_text = text_ranking(chunks, query) if mode != "vector" else []
    vector_ids = [chunk_id for chunk_id, _ in by_vector]
    scores = fuse(vector_ids, by_text)
    ordered = sorted(scores, key=lambda c: (-scores[c], c))
    # At most 2 x LIST_DEPTH rows, read in one query.
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
