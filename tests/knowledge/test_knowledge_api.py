"""Knowledge bases and documents over HTTP (Document 3, 2.2, 3 and 4.3)."""

from __future__ import annotations

import pytest

from knowledge.models import Chunk, Document
from platform_core.identity.models import KeyType
from platform_core.identity.services import api_key_create
from platform_core.tenancy.context import tenant_context

from .helpers import KB, add_markdown, create_kb, document, search, upload

pytestmark = pytest.mark.django_db

REFUNDS = """# Refunds

Customers can ask for a refund within 30 days of purchase. Refunds go back to the
original card and take five business days to appear.

## Exceptions

Gift cards and downloadable software are not refundable once used.
"""


def test_knowledge_base_crud(tenant):
    client = tenant.client()
    kb = create_kb(client, "Support")
    read = client.get(f"{KB}/{kb}").json()["data"]
    assert read["name"] == "Support"
    assert read["document_count"] == 0
    response = client.put(f"{KB}/{kb}", {"name": "Support v2", "description": "new"},
                          format="json")
    assert response.status_code == 200
    assert response.json()["data"]["description"] == "new"
    listed = client.get(KB).json()["data"]
    assert [k["id"] for k in listed] == [kb]
    bad = client.post(KB, {"name": ""}, format="json")
    assert bad.status_code == 422
    assert bad.json()["error"]["code"] == "VALIDATION_ERROR"


def test_delete_purges_documents_chunks_and_vectors(tenant, django_capture_on_commit_callbacks):
    client = tenant.client()
    kb = create_kb(client)
    doc = add_markdown(client, kb, "Refunds", REFUNDS, django_capture_on_commit_callbacks)
    assert doc["status"] == "ready"
    with tenant_context(tenant.org):
        assert Chunk.objects.filter(knowledge_base_id=kb).exists()
    assert client.delete(f"{KB}/{kb}").status_code == 204
    assert client.get(f"{KB}/{kb}").status_code == 404
    with tenant_context(tenant.org):
        assert not Chunk.objects.filter(knowledge_base_id=kb).exists()
        assert not Document.objects.filter(pk=doc["id"]).exists()


def test_markdown_document_indexes_with_progress(tenant, django_capture_on_commit_callbacks):
    client = tenant.client()
    kb = create_kb(client)
    doc = add_markdown(client, kb, "Refunds", REFUNDS, django_capture_on_commit_callbacks)
    assert doc["status"] == "ready"
    assert doc["moderation_status"] == "approved"
    assert doc["chunks_total"] == doc["chunks_done"] == 2  # one chunk per heading section
    with tenant_context(tenant.org):
        chunks = list(Chunk.objects.filter(document_id=doc["id"]).order_by("ordinal"))
    assert chunks[1].heading == "Refunds > Exceptions"
    assert len(bytes(chunks[0].embedding)) == 384 * 4
    assert client.get(f"{KB}/{kb}").json()["data"]["document_count"] == 1


def test_document_stays_processing_until_the_task_runs(tenant,
                                                       django_capture_on_commit_callbacks):
    client = tenant.client()
    kb = create_kb(client)
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = client.post(f"{KB}/{kb}/documents", {
            "source_type": "markdown", "name": "n", "content": REFUNDS}, format="json")
    assert response.json()["data"]["status"] == "processing"
    assert response.json()["data"]["chunks_done"] == 0
    assert len(callbacks) == 1
    assert search(client, "refund within 30 days") == []  # not ready: not retrievable


def test_upload_txt_md_html(tenant, django_capture_on_commit_callbacks):
    client = tenant.client()
    kb = create_kb(client)
    capture = django_capture_on_commit_callbacks
    txt = upload(client, kb, "hours.txt", b"Our office opens at nine every weekday.", capture)
    md = upload(client, kb, "ship.md", b"# Shipping\n\nParcels ship from Lisbon.", capture)
    html = upload(client, kb, "page.bin", (
        b"<!DOCTYPE html><html><head><script>stealCookies()</script><style>p{}</style>"
        b"</head><body><h2>Returns</h2><p>Returns are <b>free</b> for members.</p>"
        b"<img src=x onerror=alert(1)></body></html>"), capture)
    kinds = {r.json()["data"]["name"]: r.json()["data"]["type"] for r in (txt, md, html)}
    assert kinds == {"hours.txt": "txt", "ship.md": "md", "page.bin": "html"}
    html_doc = document(client, kb, html.json()["data"]["id"])
    assert html_doc["status"] == "ready"
    with tenant_context(tenant.org):
        text = Chunk.objects.get(document_id=html_doc["id"]).text
    assert text == "Returns are free for members."
    assert "stealCookies" not in text
    assert "<" not in text


@pytest.mark.parametrize(("name", "data"), [
    ("doc.pdf", b"%PDF-1.7\n%binary"),
    ("doc.docx", b"PK\x03\x04zipped"),
    ("notes.txt", b"\xff\xfe\x00\x00garbage"),
    ("tool.exe", b"plain text but an unsupported kind"),
])
def test_unreadable_uploads_end_failed(tenant, django_capture_on_commit_callbacks, name, data):
    """Issue 16: an unreadable file ends the document `failed` with a reason (see
    test_ingest_files.py for every type and reason)."""
    client = tenant.client()
    kb = create_kb(client)
    response = upload(client, kb, name, data, django_capture_on_commit_callbacks)
    assert response.status_code == 201
    failed = document(client, kb, response.json()["data"]["id"])
    assert failed["status"] == "failed"
    assert failed["failure_reason"]


def test_upload_over_10_mb_is_refused(tenant, django_capture_on_commit_callbacks, settings):
    settings.FILE_UPLOAD_MAX_BYTES = 10 * 1024 * 1024
    client = tenant.client()
    kb = create_kb(client)
    response = upload(client, kb, "big.txt", b"a " * (5 * 1024 * 1024 + 1),
                      django_capture_on_commit_callbacks)
    assert response.status_code == 413


def test_empty_document_fails_with_a_reason_and_retry(tenant,
                                                      django_capture_on_commit_callbacks):
    client = tenant.client()
    kb = create_kb(client)
    response = upload(client, kb, "blank.html", b"<html><body><script>x()</script></body>"
                      b"</html>", django_capture_on_commit_callbacks)
    doc = document(client, kb, response.json()["data"]["id"])
    assert doc["status"] == "failed"
    assert "no text" in doc["failure_reason"]
    with django_capture_on_commit_callbacks(execute=True):
        retried = client.post(f"{KB}/{kb}/documents/{doc['id']}/retry")
    assert retried.status_code == 202
    assert document(client, kb, doc["id"])["status"] == "failed"
    ready = add_markdown(client, kb, "ok", REFUNDS, django_capture_on_commit_callbacks)
    conflict = client.post(f"{KB}/{kb}/documents/{ready['id']}/retry")
    assert conflict.status_code == 409
    assert conflict.json()["error"]["code"] == "KNOWLEDGE_DOCUMENT_NOT_FAILED"


def test_moderation_pending_never_retrievable(tenant, django_capture_on_commit_callbacks):
    client = tenant.client()
    kb = create_kb(client)
    capture = django_capture_on_commit_callbacks
    pending = add_markdown(client, kb, "Draft", "# Warranty\n\nThe warranty lasts seven "
                           "years on every blender.", capture, require_approval=True)
    assert pending["moderation_status"] == "pending"
    assert pending["status"] == "ready"
    assert search(client, "how long is the blender warranty") == []
    answer = client.post("/api/v1/ai/kb/answers",
                         {"question": "How long is the blender warranty?"}, format="json")
    assert answer.json()["data"]["answered"] is False
    assert answer.json()["data"]["citations"] == []

    approved = client.post(f"{KB}/{kb}/documents/{pending['id']}/approve",
                           {"notes": "checked with legal"}, format="json")
    assert approved.status_code == 200
    body = approved.json()["data"]
    assert body["moderation_status"] == "approved"
    assert body["ground_truth"] is True
    assert body["moderation_notes"] == "checked with legal"
    hits = search(client, "how long is the blender warranty")
    assert [h["document_id"] for h in hits] == [pending["id"]]

    again = client.post(f"{KB}/{kb}/documents/{pending['id']}/approve")
    assert again.status_code == 409
    assert again.json()["error"]["code"] == "KNOWLEDGE_DOCUMENT_NOT_PENDING"


def test_rejected_document_stays_out(tenant, django_capture_on_commit_callbacks):
    client = tenant.client()
    kb = create_kb(client)
    doc = add_markdown(client, kb, "Rumour", "# Prices\n\nEverything is free on Mondays.",
                       django_capture_on_commit_callbacks, require_approval=True)
    rejected = client.post(f"{KB}/{kb}/documents/{doc['id']}/reject")
    assert rejected.status_code == 200
    assert rejected.json()["data"]["moderation_status"] == "rejected"
    assert search(client, "free on Mondays") == []


def test_moderation_needs_knowledge_write(tenant, django_capture_on_commit_callbacks):
    client = tenant.client()
    kb = create_kb(client)
    doc = add_markdown(client, kb, "Draft", REFUNDS, django_capture_on_commit_callbacks,
                       require_approval=True)
    _key, raw = api_key_create(organization=tenant.org, name="reader",
                               key_type=KeyType.SECRET, mode=None, scopes=["knowledge:read"])
    reader = tenant.client(raw)
    assert reader.get(f"{KB}/{kb}/documents").status_code == 200
    denied = reader.post(f"{KB}/{kb}/documents/{doc['id']}/approve")
    assert denied.status_code == 403
    assert document(client, kb, doc["id"])["moderation_status"] == "pending"


def test_delete_document(tenant, django_capture_on_commit_callbacks):
    client = tenant.client()
    kb = create_kb(client)
    doc = add_markdown(client, kb, "Refunds", REFUNDS, django_capture_on_commit_callbacks)
    assert client.delete(f"{KB}/{kb}/documents/{doc['id']}").status_code == 204
    assert client.get(f"{KB}/{kb}/documents").json()["data"] == []
    assert search(client, "refund") == []
    other_kb = create_kb(client, "Other")
    assert client.delete(f"{KB}/{other_kb}/documents/{doc['id']}").status_code == 404


def test_unknown_base_is_404(tenant):
    client = tenant.client()
    for response in (client.get(f"{KB}/kb_nope/documents"),
                     client.post(f"{KB}/kb_nope/documents", {}, format="json")):
        assert response.status_code == 404
        assert response.json()["error"]["code"] == "NOT_FOUND"


def test_lists_have_a_constant_query_count(tenant, django_capture_on_commit_callbacks):
    client = tenant.client()
    kb = create_kb(client)
    for i in range(2):
        add_markdown(client, kb, f"d{i}", REFUNDS, django_capture_on_commit_callbacks)
    create_kb(client, "second")

    def count(url: str) -> int:
        from django.db import connection
        from django.test.utils import CaptureQueriesContext
        with CaptureQueriesContext(connection) as queries:
            assert client.get(url).status_code == 200
        return len(queries)

    few_docs, few_kbs = count(f"{KB}/{kb}/documents"), count(KB)
    for i in range(3):
        add_markdown(client, kb, f"e{i}", REFUNDS, django_capture_on_commit_callbacks)
        create_kb(client, f"more {i}")
    assert count(f"{KB}/{kb}/documents") == few_docs
    assert count(KB) == few_kbs
