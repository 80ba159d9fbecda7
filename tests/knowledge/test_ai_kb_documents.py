"""The organization-wide knowledge base under /api/v1/ai/kb (Document 3, 4.2): documents
from uploads, URLs (a real local web site) and markdown; list, read, delete, reindex,
verify; asynchronous indexing with progress."""

from __future__ import annotations

import datetime as dt

import pytest
import time_machine

from knowledge.models import Chunk, KnowledgeBase
from platform_core.identity.models import KeyType
from platform_core.identity.services import api_key_create
from platform_core.tenancy.context import tenant_context

from .helpers import KB, create_kb, search
from .ingest_support import DOCS, get_doc, make_pdf, post_file, post_json, site_fixture  # noqa: F401

pytestmark = pytest.mark.django_db

PAGE = (b"<html><head><script>track()</script></head><body><h1>Opening hours</h1>"
        b"<p>The Lisbon store opens at nine and closes at six.</p></body></html>")


def _chunks(tenant, doc_id: str) -> list[Chunk]:
    with tenant_context(tenant.org):
        return list(Chunk.objects.filter(document_id=doc_id).order_by("ordinal"))


def test_upload_creates_the_organization_base_once(tenant, django_capture_on_commit_callbacks):
    client = tenant.client()
    assert client.get(DOCS).json()["data"] == []  # a read makes nothing
    with tenant_context(tenant.org):
        assert not KnowledgeBase.objects.filter(is_org_default=True).exists()
    first = post_file(client, "a.txt", b"Alpha.", django_capture_on_commit_callbacks)
    second = post_file(client, "b.txt", b"Beta.", django_capture_on_commit_callbacks)
    assert first.status_code == second.status_code == 201
    kb_id = first.json()["data"]["knowledge_base_id"]
    assert second.json()["data"]["knowledge_base_id"] == kb_id
    with tenant_context(tenant.org):
        assert KnowledgeBase.objects.filter(is_org_default=True).count() == 1
    # The base is an ordinary knowledge base too: listed, searchable.
    assert kb_id in [k["id"] for k in client.get(KB).json()["data"]]
    assert search(client, "Alpha")[0]["document_id"] == first.json()["data"]["id"]


def test_only_the_organization_base_is_listed(tenant, django_capture_on_commit_callbacks):
    client = tenant.client()
    other_kb = create_kb(client, "Product docs")
    other = post_json(client, {"source_type": "markdown", "name": "Elsewhere",
                               "content": "Not in the org base."},
                      django_capture_on_commit_callbacks, url=f"{KB}/{other_kb}/documents")
    mine = post_json(client, {"source_type": "markdown", "name": "Here",
                              "content": "# Here\n\nIn the org base.",
                              "metadata": {"team": "support"}},
                     django_capture_on_commit_callbacks)
    assert mine.status_code == 201
    listed = client.get(DOCS).json()["data"]
    assert [d["id"] for d in listed] == [mine.json()["data"]["id"]]
    assert listed[0]["metadata"] == {"team": "support"}
    assert listed[0]["status"] == "ready"
    assert client.get(f"{DOCS}/{other.json()['data']['id']}").status_code == 404


def test_list_is_keyset_paged_with_limit_1_to_100(tenant, django_capture_on_commit_callbacks,
                                                  django_assert_max_num_queries):
    client = tenant.client()
    ids = [post_json(client, {"source_type": "markdown", "name": f"Doc {n}",
                              "content": f"Document number {n}."},
                     django_capture_on_commit_callbacks,
                     execute=False).json()["data"]["id"] for n in range(5)]
    with django_assert_max_num_queries(8):
        page = client.get(DOCS, {"limit": 2}).json()
    seen = [d["id"] for d in page["data"]]
    cursor = page["meta"]["pagination"]["cursor"]
    while cursor:
        page = client.get(DOCS, {"limit": 2, "cursor": cursor}).json()
        seen += [d["id"] for d in page["data"]]
        cursor = page["meta"]["pagination"]["cursor"]
    assert sorted(seen) == sorted(ids)
    assert len(seen) == 5
    assert len(client.get(DOCS).json()["data"]) == 5  # default 100
    assert len(client.get(DOCS, {"limit": 500}).json()["data"]) == 5  # capped at 100
    for bad in ("0", "abc"):
        response = client.get(DOCS, {"limit": bad})
        assert response.status_code == 400
        assert response.json()["error"]["code"] == "VALIDATION_ERROR"


def test_get_and_delete_one_document(tenant, other_tenant, django_capture_on_commit_callbacks):
    client = tenant.client()
    doc = post_json(client, {"source_type": "markdown", "name": "Refunds",
                             "content": "# Refunds\n\nWithin 30 days."},
                    django_capture_on_commit_callbacks).json()["data"]
    read = get_doc(client, doc["id"])
    assert (read["name"], read["source_type"], read["type"]) == ("Refunds", "markdown",
                                                                 "markdown")
    assert other_tenant.client().get(f"{DOCS}/{doc['id']}").status_code == 404
    assert other_tenant.client().delete(f"{DOCS}/{doc['id']}").status_code == 404
    assert client.delete(f"{DOCS}/{doc['id']}").status_code == 204
    assert client.get(f"{DOCS}/{doc['id']}").status_code == 404
    assert _chunks(tenant, doc["id"]) == []
    assert search(client, "refunds within 30 days") == []
    missing = client.get(f"{DOCS}/kbd_nope")
    assert missing.status_code == 404
    assert missing.json()["error"]["code"] == "NOT_FOUND"


@pytest.mark.parametrize("body", [
    {"name": "no source type", "content": "x"},
    {"source_type": "pdf", "name": "n", "content": "x"},
    {"source_type": "markdown", "name": "no content"},
    {"source_type": "markdown", "name": "", "content": "x"},
    {"source_type": "url"},
    {"source_type": "url", "source_url": "ftp://example.com/file.txt"},
    {"source_type": "url", "source_url": "not a url"},
    {"source_type": "url", "source_url": "https://example.com/", "metadata": "nope"},
    {"source_type": "url", "source_url": "https://example.com/",
     "metadata": {"blob": "x" * 20000}},
])
def test_invalid_json_bodies(tenant, body):
    response = tenant.client().post(DOCS, body, format="json")
    assert response.status_code == 422, response.content
    assert response.json()["error"]["code"] == "VALIDATION_ERROR"


def test_scopes(tenant, django_capture_on_commit_callbacks):
    _key, raw = api_key_create(organization=tenant.org, name="reader",
                               key_type=KeyType.SECRET, mode=None, scopes=["knowledge:read"])
    reader = tenant.client(raw)
    doc = post_json(tenant.client(), {"source_type": "markdown", "name": "n",
                                      "content": "text"},
                    django_capture_on_commit_callbacks).json()["data"]
    assert reader.get(DOCS).status_code == 200
    assert reader.get(f"{DOCS}/{doc['id']}").status_code == 200
    for path in (DOCS, f"{DOCS}/{doc['id']}/reindex", f"{DOCS}/{doc['id']}/verify",
                 "/api/v1/ai/kb/import/help-center"):
        assert reader.post(path, {}, format="json").status_code == 403
    assert reader.delete(f"{DOCS}/{doc['id']}").status_code == 403


# --- URL documents ------------------------------------------------------------------------

def test_url_document_is_fetched_extracted_and_indexed(tenant, site,
                                                       django_capture_on_commit_callbacks):
    site.routes["/hours"] = (200, {"Content-Type": "text/html; charset=utf-8"}, PAGE)
    site.routes["/guide.pdf"] = (200, {"Content-Type": "application/pdf"},
                                 make_pdf(["Returns are free within 30 days."]))
    client = tenant.client()
    html = post_json(client, {"source_type": "url", "source_url": site.url("/hours"),
                              "metadata": {"crawl": 1}}, django_capture_on_commit_callbacks)
    assert html.status_code == 201
    assert html.json()["data"]["status"] == "processing"
    pdf = post_json(client, {"source_type": "url", "source_url": site.url("/guide.pdf"),
                             "name": "Returns guide"}, django_capture_on_commit_callbacks)
    html_doc, pdf_doc = get_doc(client, html.json()["data"]["id"]), get_doc(
        client, pdf.json()["data"]["id"])
    assert (html_doc["status"], html_doc["type"], html_doc["source_type"]) == (
        "ready", "html", "url")
    assert html_doc["source_url"] == site.url("/hours")
    assert html_doc["name"] == site.url("/hours")  # the URL when no name is given
    assert html_doc["metadata"] == {"crawl": 1}
    assert (pdf_doc["status"], pdf_doc["type"], pdf_doc["name"]) == ("ready", "pdf",
                                                                     "Returns guide")
    chunk = _chunks(tenant, html_doc["id"])[0]
    assert (chunk.heading, chunk.text) == ("Opening hours",
                                           "The Lisbon store opens at nine and closes at six.")
    assert "Returns are free within 30 days." in _chunks(tenant, pdf_doc["id"])[0].text
    assert [path for path, _ in site.requests] == ["/hours", "/guide.pdf"]


def test_a_mislabelled_url_response_is_read_by_its_content(tenant, site,
                                                           django_capture_on_commit_callbacks):
    site.routes["/download"] = (200, {"Content-Type": "text/html"},
                                make_pdf(["Served with the wrong content type."]))
    client = tenant.client()
    response = post_json(client, {"source_type": "url", "source_url": site.url("/download")},
                         django_capture_on_commit_callbacks)
    doc = get_doc(client, response.json()["data"]["id"])
    assert (doc["status"], doc["type"]) == ("ready", "pdf")


def test_url_documents_that_cannot_be_read_end_failed(tenant, site, settings,
                                                      django_capture_on_commit_callbacks):
    settings.KNOWLEDGE_URL_FETCH_TIMEOUT = 0.5

    def hang(_handler):
        site.release.wait(10)  # answers only after the fetch has given up
        return (200, {}, b"too late")

    site.routes.update({
        "/moved": (301, {"Location": "https://elsewhere.example/"}, b""),
        "/error": (500, {}, b"oops"),
        "/huge": (200, {"Content-Type": "text/plain"}, b"a" * (10 * 1024 * 1024 + 1)),
        "/binary": (200, {"Content-Type": "application/octet-stream"}, b"\x00\x01" * 50),
        "/slow": hang,
    })
    client = tenant.client()
    reasons = {}
    for path in ("/missing", "/moved", "/error", "/huge", "/binary", "/slow"):
        response = post_json(client, {"source_type": "url", "source_url": site.url(path)},
                             django_capture_on_commit_callbacks)
        assert response.status_code == 201
        doc = get_doc(client, response.json()["data"]["id"])
        assert doc["status"] == "failed"
        reasons[path] = doc["failure_reason"]
    site.release.set()
    assert "HTTP 404" in reasons["/missing"]
    assert "redirects (HTTP 301) to https://elsewhere.example/" in reasons["/moved"]
    assert "HTTP 500" in reasons["/error"]
    assert "larger than 10 MB" in reasons["/huge"]
    assert "binary" in reasons["/binary"]
    assert "timeout" in reasons["/slow"]


def test_private_and_metadata_targets_are_refused(tenant, settings):
    settings.ALLOW_PRIVATE_WEBHOOK_TARGETS = False
    client = tenant.client()
    for url in ("http://127.0.0.1:8000/admin", "http://169.254.169.254/latest/meta-data/",
                "http://metadata.google.internal/", "http://user:pw@example.com/"):
        response = client.post(DOCS, {"source_type": "url", "source_url": url}, format="json")
        assert response.status_code == 422, url
        assert response.json()["error"]["details"]["issues"][0]["field"] == "source_url"
    assert client.get(DOCS).json()["data"] == []


def test_url_document_on_a_named_base(tenant, site, django_capture_on_commit_callbacks):
    site.routes["/faq.md"] = (200, {}, b"# FAQ\n\nShipping is free over 50 euros.")
    client = tenant.client()
    kb = create_kb(client)
    response = post_json(client, {"source_type": "url", "source_url": site.url("/faq.md")},
                         django_capture_on_commit_callbacks, url=f"{KB}/{kb}/documents")
    assert response.status_code == 201
    doc_id = response.json()["data"]["id"]
    listed = client.get(f"{KB}/{kb}/documents").json()["data"]
    assert [(d["id"], d["status"], d["type"]) for d in listed] == [(doc_id, "ready", "md")]


# --- reindex, retry, verify, progress ----------------------------------------------------

def test_reindex_fetches_a_url_again(tenant, site, django_capture_on_commit_callbacks):
    capture = django_capture_on_commit_callbacks
    site.routes["/hours"] = (404, {}, b"")
    client = tenant.client()
    doc_id = post_json(client, {"source_type": "url", "source_url": site.url("/hours")},
                       capture).json()["data"]["id"]
    assert get_doc(client, doc_id)["status"] == "failed"
    site.routes["/hours"] = (200, {"Content-Type": "text/html"}, PAGE)
    with capture(execute=True):
        response = client.post(f"{DOCS}/{doc_id}/reindex")
    assert response.status_code == 202
    assert response.json()["data"]["status"] == "processing"
    assert get_doc(client, doc_id)["status"] == "ready"
    site.routes["/hours"] = (200, {"Content-Type": "text/html"},
                             PAGE.replace(b"nine", b"ten"))
    with capture(execute=True):
        client.post(f"{DOCS}/{doc_id}/reindex")
    assert "opens at ten" in _chunks(tenant, doc_id)[0].text
    assert len(site.requests) == 3


def test_reindex_rebuilds_chunks_and_refuses_while_processing(
        tenant, django_capture_on_commit_callbacks):
    capture = django_capture_on_commit_callbacks
    client = tenant.client()
    doc_id = post_json(client, {"source_type": "markdown", "name": "n",
                                "content": "# A\n\nFirst.\n\n# B\n\nSecond."},
                       capture).json()["data"]["id"]
    before = {c.pk for c in _chunks(tenant, doc_id)}
    with capture(execute=False) as queued:
        response = client.post(f"{DOCS}/{doc_id}/reindex")
    assert response.status_code == 202
    assert get_doc(client, doc_id)["status"] == "processing"
    busy = client.post(f"{DOCS}/{doc_id}/reindex")
    assert busy.status_code == 409
    assert busy.json()["error"]["code"] == "KNOWLEDGE_DOCUMENT_PROCESSING"
    for callback in queued:
        callback()
    done = get_doc(client, doc_id)
    assert (done["status"], done["chunks_done"], done["chunks_total"]) == ("ready", 2, 2)
    after = _chunks(tenant, doc_id)
    assert [c.text for c in after] == ["First.", "Second."]
    assert before.isdisjoint({c.pk for c in after})


def test_verify_stamps_last_verified_at(tenant, django_capture_on_commit_callbacks):
    client = tenant.client()
    with time_machine.travel(dt.datetime(2026, 1, 1, tzinfo=dt.UTC), tick=False):
        doc = post_json(client, {"source_type": "markdown", "name": "n", "content": "text"},
                        django_capture_on_commit_callbacks).json()["data"]
    assert doc["last_verified_at"] is None
    kb = doc["knowledge_base_id"]
    with time_machine.travel(dt.datetime(2026, 6, 1, tzinfo=dt.UTC), tick=False):
        stale = client.get(f"{KB}/{kb}/staleness").json()["data"]
        assert stale["totals"]["stale"] == 1
        assert stale["totals"]["never_verified"] == 1
        response = client.post(f"{DOCS}/{doc['id']}/verify")
        assert response.status_code == 200
        assert response.json()["data"]["last_verified_at"] == "2026-06-01T00:00:00Z"
        fresh = client.get(f"{KB}/{kb}/staleness").json()["data"]
        assert fresh["totals"]["fresh"] == 1
        assert fresh["totals"]["never_verified"] == 0
    assert get_doc(client, doc["id"])["last_verified_at"] == "2026-06-01T00:00:00Z"


def test_progress_is_readable_while_indexing_runs(tenant, monkeypatch,
                                                  django_capture_on_commit_callbacks):
    """`chunks_total` is set first and `chunks_done` advances per batch of 32; a client
    polling the document sees it (read here from inside the embedding calls)."""
    from agents import engine

    client = tenant.client()
    real_embed = engine.embed
    seen: list[tuple[str, int, int]] = []

    def observing_embed(*args, **kwargs):
        doc = client.get(DOCS).json()["data"][0]
        seen.append((doc["status"], doc["chunks_done"], doc["chunks_total"]))
        return real_embed(*args, **kwargs)

    monkeypatch.setattr(engine, "embed", observing_embed)
    sections = "\n\n".join(f"# Topic {n}\n\nParagraph about topic {n}." for n in range(70))
    response = post_file(client, "many.md", sections.encode(),
                         django_capture_on_commit_callbacks)
    assert response.status_code == 201
    assert seen == [("processing", 0, 70), ("processing", 32, 70), ("processing", 64, 70)]
    done = get_doc(client, response.json()["data"]["id"])
    assert (done["status"], done["chunks_done"], done["chunks_total"]) == ("ready", 70, 70)
