"""Chunk vectors: pgvector where the database has it, exact numpy cosine elsewhere.

Every chunk keeps its embedding as float32 bytes (`Chunk.embedding`, L2-normalised, 384
dimensions): the embedded SQLite default and a PostgreSQL without the `vector` extension
rank by exact cosine in numpy over those bytes. Where the extension exists, migration
`0002_vectors` adds a `vector(384)` column `embedding_vec` with an HNSW cosine index, the
indexer fills it beside the bytes (`store`), and the vector list is an HNSW `<=>` scan
(`nearest`). The column is outside the Django model on purpose: the model (and
`makemigrations`) stay the same on every database.

pgvector 0.8's iterative index scan is turned on per query so that a filtered search
(this organization, approved and ready documents, these bases) still returns `depth` rows
when the nearest neighbours in the index belong to others.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from django.db import connections, transaction

COLUMN = "embedding_vec"
INDEX = "knowledge_chunk_vec_hnsw"
TABLE = "knowledge_chunk"
DIMENSIONS = 384
EF_SEARCH = 100  # candidates the HNSW scan keeps; above the 50-deep list fused later

_enabled: dict[tuple[str, str], bool] = {}


def extension_available(connection) -> bool:
    if connection.vendor != "postgresql":
        return False
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'")
        return cursor.fetchone() is not None


def pgvector_enabled(using: str = "default") -> bool:
    """True when this database's chunk table has the pgvector column (cached per database)."""
    connection = connections[using]
    key = (using, str(connection.settings_dict.get("NAME")))
    if key not in _enabled:
        if connection.vendor != "postgresql":
            _enabled[key] = False
        else:
            with connection.cursor() as cursor:
                cursor.execute("SELECT 1 FROM pg_attribute WHERE attrelid = to_regclass(%s) "
                               "AND attname = %s AND NOT attisdropped", [TABLE, COLUMN])
                _enabled[key] = cursor.fetchone() is not None
    return _enabled[key]


def forget() -> None:
    """Drop the cached answers (after a migration adds or removes the column)."""
    _enabled.clear()


def literal(vector: Sequence[float] | np.ndarray) -> str:
    """pgvector's text form, `[x,y,...]`, with float32 precision."""
    return "[" + ",".join(f"{float(x):.7g}" for x in np.asarray(vector, dtype="<f4")) + "]"


def to_bytes(vector: Sequence[float] | np.ndarray) -> bytes:
    return np.asarray(vector, dtype="<f4").tobytes()


def store(ids: Sequence[int], vectors: Sequence[Sequence[float]] | np.ndarray,
          using: str = "default") -> None:
    """Write the pgvector column of these chunks (one statement); no-op without pgvector."""
    if not ids or not pgvector_enabled(using):
        return
    with connections[using].cursor() as cursor:
        cursor.execute(
            "UPDATE knowledge_chunk AS c SET embedding_vec = v.e::vector "
            "FROM unnest(%s::bigint[], %s::text[]) AS v(id, e) WHERE c.id = v.id",
            [list(ids), [literal(v) for v in vectors]])


def _numpy_nearest(chunks, query_vector: np.ndarray, depth: int) -> list[tuple[int, float]]:
    rows = list(chunks.values_list("id", "embedding"))
    if not rows:
        return []
    ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
    matrix = np.frombuffer(b"".join(bytes(r[1]) for r in rows), dtype="<f4").reshape(
        len(rows), -1)
    similarities = matrix @ query_vector.astype("<f4")
    if depth < len(rows):
        top = np.argpartition(-similarities, depth)[:depth]
    else:
        top = np.arange(len(rows))
    top = top[np.lexsort((ids[top], -similarities[top]))]
    return [(int(ids[i]), float(similarities[i])) for i in top]


def _pgvector_nearest(chunks, query_vector: np.ndarray, depth: int,
                      using: str) -> list[tuple[int, float]]:
    from django.db.models.expressions import RawSQL

    # Constants and one bound parameter: nothing from the request is in the SQL text.
    distance = RawSQL(f'"{TABLE}"."{COLUMN}" <=> %s::vector',  # noqa: S611
                      (literal(query_vector),))
    queryset = chunks.using(using).annotate(distance=distance).filter(
        distance__isnull=False).order_by("distance").values_list("id", "distance")[:depth]
    with transaction.atomic(using=using), connections[using].cursor() as cursor:
        # SET LOCAL: the settings end with this transaction, the pooled connection is clean.
        cursor.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
        cursor.execute(f"SET LOCAL hnsw.ef_search = {EF_SEARCH}")
        rows = list(queryset)
    # relaxed_order may return neighbours slightly out of order: sort them exactly.
    rows.sort(key=lambda row: (row[1], row[0]))
    return [(int(chunk_id), 1.0 - float(dist)) for chunk_id, dist in rows]


def nearest(chunks, query_vector: np.ndarray, depth: int,
            using: str = "default") -> list[tuple[int, float]]:
    """(chunk id, cosine similarity), best first, at most `depth`, among `chunks` (a
    queryset already scoped to the organization and the retrievable chunks)."""
    if pgvector_enabled(using):
        return _pgvector_nearest(chunks, query_vector, depth, using)
    return _numpy_nearest(chunks, query_vector, depth)


def backend(using: str = "default") -> str:
    return "pgvector" if pgvector_enabled(using) else "numpy"
