"""Hybrid search and grounded answers over HTTP (Document 3, 4.2 `/ai/kb`)."""

from __future__ import annotations

import pytest

from agents.usage.models import AIUsage
from knowledge import retrieval
from platform_core.tenancy.context import tenant_context

from .helpers import ANSWERS, SEARCH, add_markdown, create_kb, document, search

pytestmark = pytest.mark.django_db

CORPUS = {
    "Refunds": "# Refunds\n\nCustomers can get a refund within 30 days of purchase. The "
               "money goes back to the original card within five business days.",
    "Shipping": "# Shipping\n\nStandard delivery takes three to five days. Express "
                "delivery arrives the next business day for orders placed before noon.",
    "Passwords": "# Account security\n\nTo reset your password, open Settings, choose "
                 "Security and press Reset password. A link is emailed to you.",
    "Warranty": "# Warranty\n\nEvery blender carries a two-year warranty covering the motor "
                "and the jug. Damage from dropping it is not covered.",
    "SKU codes": "# Part numbers\n\nThe replacement jug is part ZX-4471. The lid gasket is "
                 "part ZX-0938.",
}


@pytest.fixture
def corpus(tenant, django_capture_on_commit_callbacks):
    client = tenant.client()
    kb = create_kb(client)
    ids = {name: add_markdown(client, kb, name, text, django_capture_on_commit_callbacks)["id"]
           for name, text in CORPUS.items()}
    return client, kb, ids


@pytest.mark.parametrize(("query", "expected"), [
    ("how do I get my money back", "Refunds"),
    ("when will my parcel arrive", "Shipping"),
    ("I forgot my login credentials", "Passwords"),
    ("is the motor guaranteed", "Warranty"),
    ("ZX-0938", "SKU codes"),  # an exact code: the full-text list carries it
])
def test_search_ranks_the_right_document_first(corpus, query, expected):
    client, _kb, ids = corpus
    hits = search(client, query)
    assert hits[0]["document_id"] == ids[expected]
    assert hits[0]["knowledge_base_id"] == _kb
    assert hits[0]["text"]
    assert hits[0]["source"]["name"] == expected


def test_search_shape_limit_and_threshold(corpus):
    client, _kb, _ids = corpus
    hits = search(client, "refund policy", limit=2)
    assert len(hits) == 2
    assert hits[0]["score"] >= hits[1]["score"]
    assert set(hits[0]) == {"chunk_id", "document_id", "document_name", "knowledge_base_id",
                            "heading", "text", "score", "similarity", "source"}
    strict = search(client, "refund policy", threshold=0.99)
    assert strict == []


def test_search_is_scoped_to_the_requested_bases(corpus, django_capture_on_commit_callbacks):
    client, kb, ids = corpus
    other = create_kb(client, "Internal")
    internal = add_markdown(client, other, "Refund fraud", "# Refund fraud\n\nFlag refund "
                            "requests above 500 euros.", django_capture_on_commit_callbacks)
    both = {h["document_id"] for h in search(client, "refund", limit=20)}
    assert internal["id"] in both
    only = {h["document_id"] for h in search(client, "refund", limit=20,
                                              knowledge_base_ids=[kb])}
    assert internal["id"] not in only
    assert ids["Refunds"] in only
    unknown = client.post(SEARCH, {"query": "x", "knowledge_base_ids": ["kb_nope"]},
                          format="json")
    assert unknown.status_code == 422


def test_search_never_returns_another_organizations_chunk(corpus, other_tenant,
                                                          django_capture_on_commit_callbacks):
    client, kb, _ids = corpus
    intruder = other_tenant.client()
    assert search(intruder, "refund within 30 days") == []
    response = intruder.post(SEARCH, {"query": "refund", "knowledge_base_ids": [kb]},
                             format="json")
    assert response.status_code == 422  # another organization's base is unknown here
    own = create_kb(intruder, "Theirs")
    add_markdown(intruder, own, "Theirs", "# Refunds\n\nNo refunds ever.",
                 django_capture_on_commit_callbacks)
    assert {h["knowledge_base_id"] for h in search(intruder, "refund", limit=20)} == {own}
    assert own not in {h["knowledge_base_id"] for h in search(client, "refund", limit=20)}


def test_search_validation(tenant):
    client = tenant.client()
    for body in ({}, {"query": ""}, {"query": "x", "limit": 21}, {"query": "x", "limit": 0},
                 {"query": "x", "threshold": 2}):
        response = client.post(SEARCH, body, format="json")
        assert response.status_code == 422, body
        assert response.json()["error"]["code"] == "VALIDATION_ERROR"


def test_search_is_metered(corpus, tenant):
    client, _kb, _ids = corpus
    search(client, "refund")
    with tenant_context(tenant.org):
        assert AIUsage.objects.filter(feature="kb.search").count() == 1


def test_answer_is_grounded_cited_and_stamps_last_cited_at(corpus, tenant):
    client, kb, ids = corpus
    assert document(client, kb, ids["Warranty"])["last_cited_at"] is None
    response = client.post(ANSWERS, {"question": "How long is the blender warranty?",
                                     "limit": 2}, format="json")
    assert response.status_code == 200, response.content
    body = response.json()["data"]
    assert body["answered"] is True
    assert "two-year warranty" in body["answer"]
    assert body["confidence"] >= body["min_confidence"] == 0.3
    assert body["citations"][0]["document_id"] == ids["Warranty"]
    assert len(body["citations"]) <= 2
    assert document(client, kb, ids["Warranty"])["last_cited_at"] is not None
    with tenant_context(tenant.org):
        assert AIUsage.objects.filter(feature="kb.answer").count() == 2  # embed + complete


def test_answer_below_min_confidence_says_it_does_not_know(corpus, tenant):
    client, kb, ids = corpus
    response = client.post(ANSWERS, {"question": "How long is the blender warranty?",
                                     "min_confidence": 0.99}, format="json")
    body = response.json()["data"]
    assert body["answered"] is False
    assert body["answer"].startswith("I don't know")
    assert body["citations"] == []
    assert document(client, kb, ids["Warranty"])["last_cited_at"] is None
    with tenant_context(tenant.org):  # no model was asked
        assert not AIUsage.objects.filter(feature="kb.answer").exclude(
            model__icontains="minilm").exists()


def test_answer_validation(tenant):
    client = tenant.client()
    for body in ({}, {"question": "x", "limit": 11}, {"question": "x", "min_confidence": 2}):
        response = client.post(ANSWERS, body, format="json")
        assert response.status_code == 422, body


def test_hybrid_fusion_combines_both_lists(corpus, tenant):
    """A query mixing an exact part code and words: the full-text list finds only the
    document holding the code; the fused list ranks it first with both ranks recorded."""
    _client, _kb, ids = corpus
    with tenant_context(tenant.org):
        hits = retrieval.retrieve(tenant.org, "ZX-4471 jug replacement", limit=5)
        text_only = retrieval.retrieve(tenant.org, "ZX-4471 jug replacement", limit=5,
                                       mode="text")
    assert hits[0].document_id == ids["SKU codes"]
    assert hits[0].vector_rank is not None
    assert hits[0].text_rank == 1
    assert [h.document_id for h in text_only] == [ids["SKU codes"]]


def test_fuse_is_reciprocal_rank_fusion():
    scores = retrieval.fuse([1, 2, 3], [3, 1])
    assert scores[1] == pytest.approx(1 / 61 + 1 / 62)
    assert scores[3] == pytest.approx(1 / 63 + 1 / 61)
    assert scores[2] == pytest.approx(1 / 62)
