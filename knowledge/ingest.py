"""From plain text to chunks (structure-aware chunking).

Extraction from uploaded files (PDF, DOCX, TXT, MD, HTML) lives in `knowledge/extract.py`;
fetching URLs and the worker's extraction step in `knowledge/sources.py`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .extract import MAX_BYTES, UnreadableDocument, detect_type, extract_text, html_to_text

__all__ = ["MAX_BYTES", "UnreadableDocument", "detect_type", "extract_text", "html_to_text",
           "chunk_text", "count_tokens", "embedding_input", "ChunkText"]


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
