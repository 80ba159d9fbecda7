"""Indexing a document: chunks, embeddings in batches, the full-text vector, progress.

`chunks_total` is set before the first batch and `chunks_done` advances after each, so a
client polling the document list sees the progress. Any failure (the AI budget, the
provider, unreadable content) ends the document `failed` with a reason, never half-ready.
Each batch writes the float32 bytes and, where the database has pgvector, the `vector`
column (knowledge/vectors.py); the `tsvector` is PostgreSQL's (SQLite ranks text in
Python, knowledge/retrieval.py).
"""

from __future__ import annotations

import logging

from django.contrib.postgres.search import SearchVector
from django.db import connection, transaction
from django.utils import timezone

from agents import engine
from platform_core.errors import APIError

from . import chunking, vectors
from .models import Chunk, Document, IndexStatus

log = logging.getLogger(__name__)
EMBED_BATCH = 32  # well under the engine's 96-input cap; bounds the worker's memory
FTS_CONFIG = "english"


def _fail(document: Document, reason: str) -> Document:
    Document.objects.filter(pk=document.pk).update(
        status=IndexStatus.FAILED, failure_reason=reason[:500], updated_at=timezone.now())
    document.refresh_from_db()
    return document


def index_document(document: Document) -> Document:
    pieces = chunking.chunk_text(document.content)
    Chunk.objects.filter(document=document).delete()
    Document.objects.filter(pk=document.pk).update(
        status=IndexStatus.PROCESSING, failure_reason="", chunks_total=len(pieces),
        chunks_done=0)
    if not pieces:
        return _fail(document, "The document has no text to index.")
    try:
        for start in range(0, len(pieces), EMBED_BATCH):
            batch = pieces[start:start + EMBED_BATCH]
            embedded = engine.embed(document.organization,
                                   [chunking.embedding_input(p) for p in batch],
                                   feature="kb.index").vectors
            with transaction.atomic():
                created = Chunk.objects.bulk_create([
                    Chunk(organization_id=document.organization_id, document=document,
                          knowledge_base_id=document.knowledge_base_id, ordinal=start + i,
                          heading=piece.heading, text=piece.text,
                          token_count=piece.token_count, embedding=vectors.to_bytes(vector))
                    for i, (piece, vector) in enumerate(zip(batch, embedded, strict=True))])
                vectors.store([c.pk for c in created], embedded)
                Document.objects.filter(pk=document.pk).update(
                    chunks_done=start + len(batch))
    except APIError as exc:
        Chunk.objects.filter(document=document).delete()
        return _fail(document, f"{exc.code}: {exc.message}")
    if connection.vendor == "postgresql":
        Chunk.objects.filter(document=document).update(search_vector=(
            SearchVector("heading", weight="A", config=FTS_CONFIG)
            + SearchVector("text", weight="B", config=FTS_CONFIG)))
    now = timezone.now()
    Document.objects.filter(pk=document.pk).update(status=IndexStatus.READY, indexed_at=now,
                                                   updated_at=now)
    document.refresh_from_db()
    return document
