"""From an uploaded file to plain text, and from plain text to chunks.

Types are decided by the bytes, not only by the name: a file must decode as UTF-8 text
(PDF and DOCX signatures are recognised and refused until their extractors land), and
HTML is recognised by its markup whatever the extension. HTML is reduced to text with the
standard library's parser: scripts, styles and other non-content elements are dropped, so
no markup survives into a chunk (sanitising by construction). Headings become markdown
headings so the chunker sees the structure.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from html.parser import HTMLParser

MAX_BYTES = 10 * 1024 * 1024  # Document 3, section 8
TEXT_TYPES = {"txt": "txt", "text": "txt", "md": "md", "markdown": "md", "html": "html",
              "htm": "html"}
_HTML_SNIFF = re.compile(rb"^\s*(<!doctype html|<html|<head|<body|<h[1-6]|<p[\s>]|<div)",
                         re.IGNORECASE)


class UnreadableDocument(ValueError):
    """The bytes are not a document this build can read; the message says why."""


def detect_type(name: str, data: bytes) -> str:
    """`txt`, `md` or `html` from the content (then the name); UnreadableDocument otherwise."""
    if data.startswith(b"%PDF"):
        raise UnreadableDocument("PDF extraction is not available yet; upload TXT, MD or HTML.")
    if data.startswith(b"PK\x03\x04"):
        raise UnreadableDocument("DOCX extraction is not available yet; upload TXT, MD or "
                                 "HTML.")
    if b"\x00" in data[:8192]:
        raise UnreadableDocument("The file is binary, not text.")
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        raise UnreadableDocument("The file is not UTF-8 text.") from None
    if _HTML_SNIFF.match(data[:2048]):
        return "html"
    extension = name.rsplit(".", 1)[-1].lower() if "." in name else ""
    if extension and extension not in TEXT_TYPES:
        raise UnreadableDocument(f"Files of type .{extension} are not supported; upload TXT, "
                                 "MD or HTML.")
    return TEXT_TYPES.get(extension, "txt")


class _TextExtractor(HTMLParser):
    _SKIP = {"script", "style", "head", "noscript", "template", "svg", "iframe", "object"}
    _BLOCK = {"p", "div", "section", "article", "li", "ul", "ol", "br", "tr", "table",
              "blockquote", "pre", "header", "footer", "main", "hr"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self._skip = 0

    def handle_starttag(self, tag: str, attrs) -> None:
        if tag in self._SKIP:
            self._skip += 1
        elif tag in self._BLOCK:
            self.parts.append("\n\n")
        elif re.fullmatch(r"h[1-6]", tag):
            self.parts.append("\n\n" + "#" * int(tag[1]) + " ")

    def handle_endtag(self, tag: str) -> None:
        if tag in self._SKIP:
            self._skip = max(0, self._skip - 1)
        elif tag in self._BLOCK or re.fullmatch(r"h[1-6]", tag):
            self.parts.append("\n\n")

    def handle_data(self, data: str) -> None:
        if not self._skip:
            self.parts.append(data)


def html_to_text(html: str) -> str:
    parser = _TextExtractor()
    parser.feed(html)
    parser.close()
    text = "".join(parser.parts)
    lines = [re.sub(r"[ \t\r\f\v]+", " ", line).strip() for line in text.split("\n")]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()


def extract_text(kind: str, data: bytes) -> str:
    text = data.decode("utf-8")
    if kind == "html":
        text = html_to_text(text)
    return text.replace("\r\n", "\n").strip()


# --- chunking --------------------------------------------------------------------------------

TARGET_TOKENS = 300
MAX_TOKENS = 400
OVERLAP_TOKENS = 50
_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")


def count_tokens(text: str) -> int:
    """A cheap estimate (words x 4/3, the usual WordPiece ratio for English prose)."""
    return (len(text.split()) * 4 + 2) // 3


@dataclass(frozen=True)
class ChunkText:
    heading: str
    text: str
    token_count: int


def _sections(text: str) -> list[tuple[str, list[str]]]:
    """(heading path, paragraphs) in order; paragraphs are blank-line separated blocks."""
    sections: list[tuple[str, list[str]]] = []
    path: list[str] = []
    paragraphs: list[str] = []
    current: list[str] = []

    def close_paragraph() -> None:
        if current:
            paragraphs.append(" ".join(current).strip())
            current.clear()

    def close_section() -> None:
        close_paragraph()
        if paragraphs:
            sections.append((" > ".join(path), list(paragraphs)))
            paragraphs.clear()

    in_fence = False
    for line in text.split("\n"):
        if line.strip().startswith("```"):
            in_fence = not in_fence
        heading = None if in_fence else _HEADING.match(line.strip())
        if heading:
            close_section()
            level = len(heading.group(1))
            path[:] = path[: level - 1] + [heading.group(2)]
            continue
        if not line.strip():
            close_paragraph()
        else:
            current.append(line.strip())
    close_section()
    return sections


def _split_long(paragraph: str) -> list[str]:
    """A paragraph beyond MAX_TOKENS cut into sentence groups, then word windows."""
    pieces: list[str] = []
    buffer: list[str] = []
    for sentence in re.split(r"(?<=[.!?])\s+", paragraph):
        words = sentence.split()
        while count_tokens(" ".join(words)) > MAX_TOKENS:  # one endless sentence
            size = MAX_TOKENS * 3 // 4
            pieces.append(" ".join(words[:size]))
            words = words[size:]
        sentence = " ".join(words)
        if buffer and count_tokens(" ".join([*buffer, sentence])) > TARGET_TOKENS:
            pieces.append(" ".join(buffer))
            buffer = []
        if sentence:
            buffer.append(sentence)
    if buffer:
        pieces.append(" ".join(buffer))
    return pieces


def chunk_text(text: str) -> list[ChunkText]:
    """Structure-aware chunks: one section's paragraphs packed up to ~300 tokens (400 at
    most), never across a heading; each chunk after the first of a section starts with the
    last ~50 tokens of the previous one, so a fact cut at a boundary is found whole."""
    chunks: list[ChunkText] = []
    for heading, paragraphs in _sections(text):
        pieces = [p for paragraph in paragraphs for p in (
            _split_long(paragraph) if count_tokens(paragraph) > MAX_TOKENS else [paragraph])]
        body: list[str] = []
        for piece in pieces:
            candidate = "\n\n".join([*body, piece])
            if body and count_tokens(candidate) > TARGET_TOKENS:
                chunks.append(_chunk(heading, body))
                tail = " ".join(body).split()[-(OVERLAP_TOKENS * 3 // 4):]
                body = [" ".join(tail)] if count_tokens(" ".join(tail) + " " + piece) \
                    <= MAX_TOKENS else []
            body.append(piece)
        if body:
            chunks.append(_chunk(heading, body))
    return chunks


def _chunk(heading: str, body: list[str]) -> ChunkText:
    text = "\n\n".join(body)
    return ChunkText(heading=heading[:500], text=text, token_count=count_tokens(text))


def embedding_input(chunk: ChunkText) -> str:
    return f"{chunk.heading}\n{chunk.text}" if chunk.heading else chunk.text
