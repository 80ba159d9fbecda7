"""Retrieval quality on a labelled set (issue 16): recall@5 of hybrid retrieval against
each ranked list alone, over the small help-center corpus in `recall/`.

`recall/corpus.json` holds 45 documents: 20 product pages of identical structure told
apart by their model codes (where embeddings are weak) and 25 policy pages asked about in
other words than their own (where full text is weak). `recall/questions.json` labels each
question with the document that answers it; a question counts as recalled when a chunk of
that document is among the first five hits.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from knowledge import retrieval, vectors
from platform_core.tenancy.context import tenant_context

from .helpers import add_markdown, create_kb

pytestmark = pytest.mark.django_db
HERE = Path(__file__).parent / "recall"
CORPUS = json.loads((HERE / "corpus.json").read_text())
QUESTIONS = json.loads((HERE / "questions.json").read_text())
K = 5


def test_the_labelled_set_is_large_enough_and_consistent():
    assert len(QUESTIONS) >= 50
    assert {q["document"] for q in QUESTIONS} <= set(CORPUS)


def test_hybrid_recall_at_5_beats_either_list_alone(tenant, django_capture_on_commit_callbacks,
                                                    capsys):
    client = tenant.client()
    kb = create_kb(client, "Recall corpus")
    ids = {name: add_markdown(client, kb, name, text, django_capture_on_commit_callbacks)["id"]
           for name, text in CORPUS.items()}
    recalled = {mode: 0 for mode in retrieval.MODES}
    misses: dict[str, list[str]] = {mode: [] for mode in retrieval.MODES}
    with tenant_context(tenant.org):
        for item in QUESTIONS:
            query_vector = retrieval.embed_query(tenant.org, item["question"])
            for mode in retrieval.MODES:
                hits = retrieval.retrieve(tenant.org, item["question"], limit=K, mode=mode,
                                          query_vector=query_vector)
                if ids[item["document"]] in {h.document_id for h in hits}:
                    recalled[mode] += 1
                else:
                    misses[mode].append(item["question"])
    recall = {mode: recalled[mode] / len(QUESTIONS) for mode in recalled}
    with capsys.disabled():
        print(f"\nrecall@{K} over {len(QUESTIONS)} questions ({vectors.backend()}): "
              + ", ".join(f"{mode} {value:.3f}" for mode, value in recall.items()))
    assert recall["hybrid"] > recall["vector"], misses
    assert recall["hybrid"] > recall["text"], misses
