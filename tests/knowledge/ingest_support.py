"""Support of the ingestion tests: real PDF and DOCX files built in code, and a local HTTP
server that plays a web site or a help-center API."""

from __future__ import annotations

import contextlib
import io
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

AI_KB = "/api/v1/ai/kb"
DOCS = f"{AI_KB}/documents"


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def make_pdf(pages: list[str], *, user_password: str | None = None,
             owner_password: str | None = None) -> bytes:
    """A PDF with one line of Helvetica text per page: a minimal hand-made file read
    strictly by pypdf and written again by its PdfWriter (encrypted with AES-256 when a
    password is given)."""
    from pypdf import PdfReader, PdfWriter

    objects = ["<< /Type /Catalog /Pages 2 0 R >>", None,
               "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"]
    kids = []
    for text in pages:
        stream = f"BT /F1 12 Tf 72 720 Td ({_escape(text)}) Tj ET".encode("latin-1")
        objects.append(f"<< /Length {len(stream)} >>\nstream\n{stream.decode('latin-1')}"
                       "\nendstream")
        content_ref = len(objects)
        objects.append(f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources "
                       f"<< /Font << /F1 3 0 R >> >> /Contents {content_ref} 0 R >>")
        kids.append(f"{len(objects)} 0 R")
    objects[1] = f"<< /Type /Pages /Kids [{' '.join(kids)}] /Count {len(kids)} >>"
    raw = bytearray(b"%PDF-1.7\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(raw))
        raw += f"{number} 0 obj\n{body}\nendobj\n".encode("latin-1")
    xref = len(raw)
    raw += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    raw += b"".join(f"{offset:010d} 00000 n \n".encode() for offset in offsets)
    raw += (f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n"
            "%%EOF\n").encode()
    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(bytes(raw)), strict=True))
    if user_password is not None or owner_password is not None:
        writer.encrypt(user_password or "", owner_password, algorithm="AES-256")
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def make_docx(*, title: str = "Refund policy") -> bytes:
    """A DOCX with a title, headings, paragraphs, a bulleted list and a table."""
    import docx

    document = docx.Document()
    document.add_heading(title, level=1)
    document.add_paragraph("Customers can ask for a refund within 30 days of purchase.")
    document.add_heading("Exceptions", level=2)
    document.add_paragraph("Gift cards are not refundable.", style="List Bullet")
    table = document.add_table(rows=2, cols=2)
    for (row, col), text in {(0, 0): "Plan", (0, 1): "Refund window",
                             (1, 0): "Annual", (1, 1): "60 days"}.items():
        table.cell(row, col).text = text
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def post_file(client, name: str, data: bytes, capture, *, url: str = DOCS,
              execute: bool = True, **fields):
    with capture(execute=execute):
        return client.post(url, {"file": SimpleUploadedFile(name, data), **fields},
                           format="multipart")


def post_json(client, body: dict, capture, *, url: str = DOCS, execute: bool = True):
    with capture(execute=execute):
        return client.post(url, body, format="json")


def get_doc(client, doc_id: str) -> dict:
    response = client.get(f"{DOCS}/{doc_id}")
    assert response.status_code == 200, response.content
    return response.json()["data"]


# --- a local web site -----------------------------------------------------------------

Reply = tuple[int, dict[str, str], bytes]


@dataclass
class Site:
    """Routes of path (with query) -> reply, or a callable of the request handler."""

    routes: dict[str, Reply | Callable[[BaseHTTPRequestHandler], Reply]] = field(
        default_factory=dict)
    requests: list[tuple[str, dict[str, str]]] = field(default_factory=list)
    base_url: str = ""
    release: threading.Event = field(default_factory=threading.Event)

    def url(self, path: str) -> str:
        return self.base_url + path


def _handler(site: Site):
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args) -> None:  # quiet
            pass

        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            site.requests.append((self.path, dict(self.headers.items())))
            reply = site.routes.get(self.path)
            if callable(reply):
                reply = reply(self)
            status, headers, body = reply or (404, {"Content-Type": "text/plain"},
                                              b"not found")
            self.send_response(status)
            for key, value in {"Content-Length": str(len(body)), **headers}.items():
                self.send_header(key, value)
            self.end_headers()
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                self.wfile.write(body)

    return Handler


@pytest.fixture(name="site")
def site_fixture(settings):
    """A running local web site; private targets are allowed, as in other outbound tests."""
    from platform_core.net import http

    settings.ALLOW_PRIVATE_WEBHOOK_TARGETS = True
    fake = Site()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(fake))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    fake.base_url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        yield fake
    finally:
        fake.release.set()
        http.close_connections()
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
