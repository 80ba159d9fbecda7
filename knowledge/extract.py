"""From a file's bytes to plain text: PDF (pypdf), DOCX (python-docx), TXT, MD and HTML.

The type is decided by the content (the `%PDF-` signature, a ZIP holding
`word/document.xml`, UTF-8 text, HTML markup), and the name must agree with it: a `.pdf`
that is not a PDF, or a PDF named `.txt`, is refused rather than guessed at. Every refusal
is an `UnreadableDocument` whose message is the reason the document ends `failed` with;
a parser's own exception never escapes (the worker would turn it into a crash, the upload
into a 500). HTML is sanitised with nh3 (script, style and unknown elements dropped, with
their content for script and style) and then reduced to text; headings of HTML and DOCX
become markdown headings so the chunker sees the structure.
"""

from __future__ import annotations

import io
import logging
import re
import zipfile
from html.parser import HTMLParser

log = logging.getLogger(__name__)

MAX_BYTES = 10 * 1024 * 1024  # Document 3, section 8
TEXT_EXTENSIONS = {"txt": "txt", "text": "txt", "md": "md", "markdown": "md", "html": "html",
                   "htm": "html"}
BINARY_EXTENSIONS = {"pdf": "pdf", "docx": "docx"}
_HTML_SNIFF = re.compile(rb"^\s*(<!doctype html|<html|<head|<body|<h[1-6]|<p[\s>]|<div)",
                         re.IGNORECASE)
_OLE_SIGNATURE = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"  # legacy .doc, or an encrypted .docx
# A DOCX may not unpack to more than this (a 10 MB archive of zeros is a zip bomb), and no
# document may yield more text than this: the worker's memory stays bounded.
MAX_UNPACKED_BYTES = 200 * 1024 * 1024
MAX_TEXT_CHARS = 10 * 1024 * 1024


class UnreadableDocument(ValueError):
    """The bytes are not a document the knowledge base can read; the message says why."""


def extension_of(name: str) -> str:
    return name.rsplit(".", 1)[-1].lower() if "." in name else ""


def _is_docx(data: bytes) -> bool:
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            entries = archive.infolist()
    except (zipfile.BadZipFile, ValueError, OSError):
        return False
    if sum(entry.file_size for entry in entries) > MAX_UNPACKED_BYTES:
        raise UnreadableDocument("The DOCX unpacks to more than 200 MB; it is refused.")
    return any(entry.filename == "word/document.xml" for entry in entries)


def _sniff(data: bytes) -> str:
    """`pdf`, `docx`, `html` or `text` from the bytes alone."""
    if data.startswith(b"%PDF-"):
        return "pdf"
    if data.startswith(b"PK\x03\x04"):
        if _is_docx(data):
            return "docx"
        raise UnreadableDocument("The file is a ZIP archive but not a DOCX document.")
    if data.startswith(_OLE_SIGNATURE):
        raise UnreadableDocument("The file is an encrypted (password-protected) DOCX or a "
                                 "legacy .doc; save it as an unprotected .docx.")
    if b"\x00" in data[:8192]:
        raise UnreadableDocument("The file is binary, not a PDF, DOCX or text document.")
    return "html" if _HTML_SNIFF.match(data[:2048]) else "text"


def detect_type(name: str, data: bytes, *, name_is_hint: bool = False) -> str:
    """`pdf`, `docx`, `html`, `md` or `txt`; UnreadableDocument when the content is none of
    them or the name says another type than the content. A name that is only a hint (a web
    server's Content-Type) gives way to a PDF or DOCX signature instead."""
    if not data:
        raise UnreadableDocument("The file is empty.")
    extension = extension_of(name)
    sniffed = _sniff(data)
    if sniffed in ("pdf", "docx"):
        if extension and extension != sniffed and not name_is_hint:
            raise UnreadableDocument(f"The file is named .{extension} but its content is a "
                                     f"{sniffed.upper()} document.")
        return sniffed
    if extension in BINARY_EXTENSIONS:
        raise UnreadableDocument(f"The file is named .{extension} but its content is not a "
                                 f"{extension.upper()} document.")
    if sniffed == "html":
        return "html"  # markup is recognised (and sanitised) whatever the name says
    if extension and extension not in TEXT_EXTENSIONS:
        raise UnreadableDocument(f"Files of type .{extension} are not supported; upload PDF, "
                                 "DOCX, TXT, MD or HTML.")
    return TEXT_EXTENSIONS.get(extension, "txt")


def extract_text(kind: str, data: bytes) -> str:
    """The plain text of a document of type `kind` (from `detect_type`)."""
    if kind == "pdf":
        text = _pdf_text(data)
    elif kind == "docx":
        text = _docx_text(data)
    else:
        text = _decode(data)
        if kind == "html":
            text = html_to_text(text)
    text = _tidy(text)
    if not text:
        raise UnreadableDocument("The document has no text to index.")
    if len(text) > MAX_TEXT_CHARS:
        raise UnreadableDocument("The document holds more than 10 MB of text; split it.")
    return text


def _decode(data: bytes) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise UnreadableDocument("The file is not UTF-8 text.") from None


def _tidy(text: str) -> str:
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\x00", "")
    return re.sub(r"\n{3,}", "\n\n", text).strip()


# --- PDF ---------------------------------------------------------------------------------

def _pdf_text(data: bytes) -> str:
    from pypdf import PdfReader
    from pypdf.errors import FileNotDecryptedError

    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted:
            # An owner-password-only PDF opens with the empty user password.
            try:
                opened = reader.decrypt("")
            except (FileNotDecryptedError, NotImplementedError, ValueError):
                opened = 0
            if not opened:
                raise UnreadableDocument("The PDF is encrypted (password protected); upload "
                                         "an unprotected copy.")
        pages = [page.extract_text() or "" for page in reader.pages]
    except UnreadableDocument:
        raise
    except Exception as exc:  # PdfReadError and whatever a parser raises on hostile input
        log.info("unreadable PDF: %r", exc)
        raise UnreadableDocument(f"The PDF could not be read ({exc.__class__.__name__})."
                                 ) from None
    text = "\n\n".join(page.strip() for page in pages if page.strip())
    if not text:
        raise UnreadableDocument("The PDF has no extractable text (a scanned PDF needs OCR "
                                 "first).")
    return text


# --- DOCX --------------------------------------------------------------------------------

def _docx_text(data: bytes) -> str:
    import docx
    from docx.table import Table

    try:
        document = docx.Document(io.BytesIO(data))
        blocks: list[str] = []
        for item in document.iter_inner_content():
            if isinstance(item, Table):
                for row in item.rows:
                    cells = [cell.text.strip() for cell in row.cells]
                    if any(cells):
                        blocks.append(" | ".join(cells))
                continue
            text = item.text.strip()
            if not text:
                continue
            style = (item.style.name if item.style is not None else "") or ""
            level = re.fullmatch(r"Heading (\d)", style)
            if level:
                blocks.append("#" * min(int(level.group(1)), 6) + " " + text)
            elif style == "Title":
                blocks.append("# " + text)
            elif style.startswith("List"):
                blocks.append("- " + text)
            else:
                blocks.append(text)
    except Exception as exc:  # bad XML, missing parts, whatever hostile input provokes
        log.info("unreadable DOCX: %r", exc)
        raise UnreadableDocument(f"The DOCX could not be read ({exc.__class__.__name__})."
                                 ) from None
    return "\n\n".join(blocks)


# --- HTML --------------------------------------------------------------------------------

# Structure worth keeping through the sanitiser; everything else is unwrapped to its text.
_KEEP_TAGS = {"h1", "h2", "h3", "h4", "h5", "h6", "p", "div", "section", "article", "li",
              "ul", "ol", "br", "tr", "td", "th", "table", "thead", "tbody", "blockquote",
              "pre", "code", "header", "footer", "main", "hr", "span", "a", "em", "strong",
              "b", "i"}
_DROP_WITH_CONTENT = {"script", "style", "head", "noscript", "template", "svg", "iframe",
                      "object", "title", "math", "nav", "form", "select", "button"}


def sanitise_html(html: str) -> str:
    import nh3

    return nh3.clean(html, tags=_KEEP_TAGS, clean_content_tags=_DROP_WITH_CONTENT,
                     attributes={}, link_rel=None, strip_comments=True)


class _TextExtractor(HTMLParser):
    _BLOCK = {"p", "div", "section", "article", "li", "ul", "ol", "br", "tr", "table",
              "blockquote", "pre", "header", "footer", "main", "hr"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []

    def handle_starttag(self, tag: str, attrs) -> None:
        if tag in self._BLOCK:
            self.parts.append("\n\n")
        elif re.fullmatch(r"h[1-6]", tag):
            self.parts.append("\n\n" + "#" * int(tag[1]) + " ")
        elif tag in ("td", "th"):
            self.parts.append(" | ")

    def handle_endtag(self, tag: str) -> None:
        if tag in self._BLOCK or re.fullmatch(r"h[1-6]", tag):
            self.parts.append("\n\n")

    def handle_data(self, data: str) -> None:
        self.parts.append(data)


def html_to_text(html: str) -> str:
    """Sanitised with nh3 first, then the remaining markup turned into text."""
    parser = _TextExtractor()
    parser.feed(sanitise_html(html))
    parser.close()
    text = "".join(parser.parts)
    lines = [re.sub(r"[ \t\r\f\v]+", " ", line).strip(" |").strip()
             for line in text.split("\n")]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()
