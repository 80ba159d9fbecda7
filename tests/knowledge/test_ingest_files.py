"""Uploads of every file type, built for real in code (Document 3, 2.2, 3, 4.2, 4.3, 8):
PDF (pypdf), DOCX (python-docx), TXT, MD, HTML (nh3); the type read from the content; an
unreadable, encrypted or mismatched file ends `failed` with a reason, never a 500."""

from __future__ import annotations

import io
import zipfile

import pytest

from knowledge.models import Chunk, DocumentSource
from platform_core.tenancy.context import tenant_context

from .helpers import KB, create_kb, document, search
from .ingest_support import DOCS, get_doc, make_docx, make_pdf, post_file

pytestmark = pytest.mark.django_db


def _chunks(tenant, doc_id: str) -> list[Chunk]:
    with tenant_context(tenant.org):
        return list(Chunk.objects.filter(document_id=doc_id).order_by("ordinal"))


def _upload(tenant, name: str, data: bytes, capture) -> dict:
    client = tenant.client()
    response = post_file(client, name, data, capture)
    assert response.status_code == 201, response.content
    assert response.json()["data"]["status"] == "processing"
    return get_doc(client, response.json()["data"]["id"])


def test_pdf_is_extracted_indexed_and_searchable(tenant, django_capture_on_commit_callbacks):
    data = make_pdf(["Refunds take five business days to reach the original card.",
                     "Parcels ship from the Lisbon warehouse every weekday."])
    doc = _upload(tenant, "policy.pdf", data, django_capture_on_commit_callbacks)
    assert (doc["status"], doc["type"], doc["source_type"]) == ("ready", "pdf", "upload")
    assert doc["size_bytes"] == len(data)
    assert doc["chunks_total"] == doc["chunks_done"] >= 1
    text = " ".join(c.text for c in _chunks(tenant, doc["id"]))
    assert "Refunds take five business days" in text
    assert "Lisbon warehouse" in text  # the second page too
    hits = search(tenant.client(), "Where do parcels ship from?")
    assert hits
    assert hits[0]["document_id"] == doc["id"]
    with tenant_context(tenant.org):  # the bytes are not kept once the text is out
        assert not DocumentSource.objects.filter(document_id=doc["id"]).exists()


def test_encrypted_pdf_ends_failed_with_the_reason(tenant, django_capture_on_commit_callbacks):
    data = make_pdf(["Secret text"], user_password="open-sesame", owner_password="owner")
    doc = _upload(tenant, "locked.pdf", data, django_capture_on_commit_callbacks)
    assert doc["status"] == "failed"
    assert doc["type"] == "pdf"
    assert "encrypted" in doc["failure_reason"]
    assert _chunks(tenant, doc["id"]) == []


def test_pdf_with_only_an_owner_password_is_read(tenant, django_capture_on_commit_callbacks):
    data = make_pdf(["Printing is restricted but the text is open."],
                    owner_password="owner-only")
    doc = _upload(tenant, "restricted.pdf", data, django_capture_on_commit_callbacks)
    assert doc["status"] == "ready", doc["failure_reason"]
    assert "text is open" in _chunks(tenant, doc["id"])[0].text


@pytest.mark.parametrize(("name", "data", "reason"), [
    ("broken.pdf", b"%PDF-1.7\n1 0 obj << /Type /Catalog", "The PDF could not be read"),
    ("blank.pdf", make_pdf([""]), "no extractable text"),
    ("broken.docx", b"PK\x03\x04" + b"\x00" * 64, "ZIP archive but not a DOCX"),
    ("legacy.doc", b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 64, "legacy .doc"),
    ("protected.docx", b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 64, "encrypted"),
    ("latin1.txt", "Caf\u00e9 cr\u00e8me".encode("latin-1"), "not UTF-8"),
    ("blob.txt", b"ab\x00cd" * 10, "binary"),
    ("blank.md", b"  \n\n \n", "no text"),
    ("tool.exe", b"plain text but an unsupported kind", ".exe are not supported"),
])
def test_unreadable_files_end_failed(tenant, django_capture_on_commit_callbacks, name, data,
                                     reason):
    doc = _upload(tenant, name, data, django_capture_on_commit_callbacks)
    assert doc["status"] == "failed"
    assert reason in doc["failure_reason"], doc["failure_reason"]
    assert doc["chunks_done"] == 0


def test_an_empty_file_is_refused(tenant, django_capture_on_commit_callbacks):
    response = post_file(tenant.client(), "empty.txt", b"", django_capture_on_commit_callbacks)
    assert response.status_code == 422
    assert response.json()["error"]["code"] == "VALIDATION_ERROR"


def _zip_without_word() -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr("hello.txt", "not a word document")
    return out.getvalue()


@pytest.mark.parametrize(("name", "data", "reason"), [
    ("notes.txt", make_pdf(["A PDF in disguise"]), "named .txt but its content is a PDF"),
    ("report.pdf", b"Just some text, not a PDF.", "named .pdf but its content is not a PDF"),
    ("letter.pdf", make_docx(), "named .pdf but its content is a DOCX"),
    ("letter.docx", make_pdf(["x"]), "named .docx but its content is a PDF"),
    ("archive.docx", _zip_without_word(), "ZIP archive but not a DOCX"),
    ("page.md", make_docx(), "named .md but its content is a DOCX"),
])
def test_type_is_checked_by_content_not_by_name(tenant, django_capture_on_commit_callbacks,
                                                name, data, reason):
    doc = _upload(tenant, name, data, django_capture_on_commit_callbacks)
    assert doc["status"] == "failed"
    assert reason in doc["failure_reason"], doc["failure_reason"]


def test_content_decides_when_the_name_has_no_extension(tenant,
                                                        django_capture_on_commit_callbacks):
    pdf = _upload(tenant, "scan", make_pdf(["Nameless but a PDF."]),
                  django_capture_on_commit_callbacks)
    docx = _upload(tenant, "letter", make_docx(), django_capture_on_commit_callbacks)
    assert (pdf["status"], pdf["type"]) == ("ready", "pdf")
    assert (docx["status"], docx["type"]) == ("ready", "docx")


def test_docx_keeps_headings_lists_and_tables(tenant, django_capture_on_commit_callbacks):
    doc = _upload(tenant, "refunds.docx", make_docx(), django_capture_on_commit_callbacks)
    assert (doc["status"], doc["type"]) == ("ready", "docx")
    chunks = _chunks(tenant, doc["id"])
    assert [c.heading for c in chunks] == ["Refund policy", "Refund policy > Exceptions"]
    assert "within 30 days of purchase" in chunks[0].text
    assert "- Gift cards are not refundable." in chunks[1].text
    assert "Annual | 60 days" in chunks[1].text


def test_html_is_sanitised_then_converted(tenant, django_capture_on_commit_callbacks):
    html = (b"<!DOCTYPE html><html><head><title>Tab title</title>"
            b"<script>stealCookies()</script><style>p{color:red}</style></head><body>"
            b"<nav>Home | Pricing</nav><h1>Returns</h1>"
            b"<p onclick=\"evil()\">Returns are <b>free</b> for members.</p>"
            b"<iframe src=\"https://evil.example\">framed text</iframe>"
            b"<img src=x onerror=alert(1)><!-- a comment -->"
            b"<h2>Exchanges</h2><ul><li>Sizes within 14 days</li></ul></body></html>")
    doc = _upload(tenant, "returns.html", html, django_capture_on_commit_callbacks)
    assert (doc["status"], doc["type"]) == ("ready", "html")
    chunks = _chunks(tenant, doc["id"])
    text = "\n".join(c.text for c in chunks)
    assert [c.heading for c in chunks] == ["Returns", "Returns > Exchanges"]
    assert chunks[0].text == "Returns are free for members."
    assert "Sizes within 14 days" in chunks[1].text
    for leaked in ("stealCookies", "color:red", "Tab title", "framed text", "evil",
                   "onerror", "a comment", "Home | Pricing", "<", ">"):
        assert leaked not in text


def test_html_markup_is_sanitised_whatever_the_name(tenant, django_capture_on_commit_callbacks):
    doc = _upload(tenant, "notes.txt",
                  b"<html><body><script>x()</script><p>Plain words.</p></body></html>",
                  django_capture_on_commit_callbacks)
    assert (doc["status"], doc["type"]) == ("ready", "html")
    assert _chunks(tenant, doc["id"])[0].text == "Plain words."


def test_txt_and_md_with_a_byte_order_mark(tenant, django_capture_on_commit_callbacks):
    txt = _upload(tenant, "hours.txt", "\ufeffOpen at nine.\r\nClosed on Sundays.".encode(),
                  django_capture_on_commit_callbacks)
    md = _upload(tenant, "ship.markdown", b"# Shipping\n\nParcels ship from Lisbon.",
                 django_capture_on_commit_callbacks)
    assert (txt["status"], txt["type"], md["status"], md["type"]) == (
        "ready", "txt", "ready", "md")
    assert _chunks(tenant, txt["id"])[0].text == "Open at nine. Closed on Sundays."
    assert _chunks(tenant, md["id"])[0].heading == "Shipping"


def test_the_10_mb_cap(tenant, django_capture_on_commit_callbacks):
    client = tenant.client()
    limit = 10 * 1024 * 1024
    over = post_file(client, "big.txt", b"a" * (limit + 1), django_capture_on_commit_callbacks,
                     execute=False)
    assert over.status_code == 413
    assert over.json()["error"]["code"] == "FILE_TOO_LARGE"
    assert over.json()["error"]["details"]["max_bytes"] == limit
    assert client.get(DOCS).json()["data"] == []
    at_limit = post_file(client, "big.txt", b"word " * (limit // 5),
                         django_capture_on_commit_callbacks, execute=False)
    assert at_limit.status_code == 201
    assert at_limit.json()["data"]["size_bytes"] == limit


def test_retry_extracts_the_stored_file_again(tenant, django_capture_on_commit_callbacks):
    """A failed upload keeps its bytes: retry (Document 3, 3) reads them again."""
    client = tenant.client()
    kb = create_kb(client)
    capture = django_capture_on_commit_callbacks
    response = post_file(client, "locked.pdf", make_pdf(["x"], user_password="pw"), capture,
                         url=f"{KB}/{kb}/documents")
    doc_id = response.json()["data"]["id"]
    assert document(client, kb, doc_id)["status"] == "failed"
    with capture(execute=True):
        retried = client.post(f"{KB}/{kb}/documents/{doc_id}/retry")
    assert retried.status_code == 202
    again = document(client, kb, doc_id)
    assert again["status"] == "failed"
    assert "encrypted" in again["failure_reason"]


def test_every_type_through_a_named_knowledge_base(tenant, django_capture_on_commit_callbacks):
    """The per-base route (Document 3, 4.3) reads the same types as /ai/kb."""
    client = tenant.client()
    kb = create_kb(client)
    files = {"a.pdf": make_pdf(["Alpha text."]), "b.docx": make_docx(),
             "c.txt": b"Gamma text.", "d.md": b"# Delta\n\nDelta text.",
             "e.html": b"<p>Epsilon text.</p>"}
    ids = {}
    for name, data in files.items():
        response = post_file(client, name, data, django_capture_on_commit_callbacks,
                             url=f"{KB}/{kb}/documents")
        assert response.status_code == 201, response.content
        ids[name] = response.json()["data"]["id"]
    listed = {d["id"]: d for d in client.get(f"{KB}/{kb}/documents").json()["data"]}
    assert {name: (listed[i]["status"], listed[i]["type"]) for name, i in ids.items()} == {
        "a.pdf": ("ready", "pdf"), "b.docx": ("ready", "docx"), "c.txt": ("ready", "txt"),
        "d.md": ("ready", "md"), "e.html": ("ready", "html")}


def test_a_docx_that_unpacks_too_far_is_refused(tenant, monkeypatch,
                                                 django_capture_on_commit_callbacks):
    from knowledge import extract

    monkeypatch.setattr(extract, "MAX_UNPACKED_BYTES", 1024 * 1024)
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(make_docx())) as source, zipfile.ZipFile(
            out, "w", zipfile.ZIP_DEFLATED) as bomb:
        for item in source.infolist():
            bomb.writestr(item, source.read(item))
        bomb.writestr("word/media/zeros.bin", b"\x00" * (2 * 1024 * 1024))
    assert len(out.getvalue()) < 64 * 1024  # small on the wire
    doc = _upload(tenant, "bomb.docx", out.getvalue(), django_capture_on_commit_callbacks)
    assert doc["status"] == "failed"
    assert "unpacks to more than" in doc["failure_reason"]


def test_too_much_extracted_text_is_refused(tenant, monkeypatch,
                                            django_capture_on_commit_callbacks):
    from knowledge import extract

    monkeypatch.setattr(extract, "MAX_TEXT_CHARS", 1000)
    doc = _upload(tenant, "long.txt", b"word " * 400, django_capture_on_commit_callbacks)
    assert doc["status"] == "failed"
    assert "more than 10 MB of text" in doc["failure_reason"]


def test_a_parser_crash_is_a_reason_not_a_500(tenant, monkeypatch,
                                              django_capture_on_commit_callbacks):
    """Whatever pypdf raises on hostile input ends the document `failed`."""
    import pypdf

    def explode(*_args, **_kwargs):
        raise MemoryError("a pathological file")

    data = make_pdf(["x"])
    monkeypatch.setattr(pypdf, "PdfReader", explode)
    doc = _upload(tenant, "hostile.pdf", data, django_capture_on_commit_callbacks)
    assert doc["status"] == "failed"
    assert doc["failure_reason"] == "The PDF could not be read (MemoryError)."
