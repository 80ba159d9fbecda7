"""Structure-aware chunking of a document's plain text (issue 16, indexing).

Sections are cut at markdown headings (ignoring fenced code); a section's paragraphs are
packed up to ~300 tokens (400 at most) and never across a heading, so a chunk talks about
one thing. A paragraph longer than the cap is cut at sentences, then at words. Each further
chunk of a section starts with the last ~50 tokens of the previous one, so a fact cut at a
boundary is still found whole. The heading path (`A > B`) is kept per chunk and embedded
with the text: it is often the best summary of what the chunk answers.

Tokens are estimated as words x 4/3 (the usual WordPiece ratio for English prose), which
is what MiniLM's 256-wordpiece window and the 200-400 token goal are measured in.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

TARGET_TOKENS = 300
MAX_TOKENS = 400
OVERLAP_TOKENS = 50
HEADING_CHARS = 500
_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def count_tokens(text: str) -> int:
    return (len(text.split()) * 4 + 2) // 3


def _words_for(tokens: int) -> int:
    return max(1, tokens * 3 // 4)


@dataclass(frozen=True)
class ChunkText:
    heading: str
    text: str
    token_count: int


def sections(text: str) -> Iterator[tuple[str, list[str]]]:
    """(heading path, paragraphs) in order; paragraphs are blank-line separated blocks.
    A generator: a 10 MB document is never held twice as section lists."""
    path: list[str] = []
    paragraphs: list[str] = []
    current: list[str] = []
    in_fence = False
    for raw in text.split("\n"):
        line = raw.strip()
        if line.startswith("```"):
            in_fence = not in_fence
        heading = None if in_fence else _HEADING.match(line)
        if (heading or not line) and current:
            paragraphs.append(" ".join(current))
            current = []
        if heading:
            if paragraphs:
                yield " > ".join(path), paragraphs
                paragraphs = []
            level = len(heading.group(1))
            path[:] = [*path[: level - 1], heading.group(2)]
        elif line:
            current.append(line)
    if current:
        paragraphs.append(" ".join(current))
    if paragraphs:
        yield " > ".join(path), paragraphs


def split_long(paragraph: str) -> list[str]:
    """A paragraph beyond MAX_TOKENS cut into sentence groups of ~TARGET_TOKENS, an endless
    sentence into word windows."""
    pieces: list[str] = []
    buffer: list[str] = []
    for sentence in _SENTENCE_END.split(paragraph):
        words = sentence.split()
        while count_tokens(" ".join(words)) > MAX_TOKENS:
            size = _words_for(TARGET_TOKENS)
            if buffer:
                pieces.append(" ".join(buffer))
                buffer = []
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


def _chunk(heading: str, body: list[str]) -> ChunkText:
    text = "\n\n".join(body)
    return ChunkText(heading=heading[:HEADING_CHARS], text=text,
                     token_count=count_tokens(text))


def iter_chunks(text: str) -> Iterator[ChunkText]:
    """The chunks of `text` in document order (see the module docstring)."""
    overlap_words = _words_for(OVERLAP_TOKENS)
    for heading, paragraphs in sections(text):
        body: list[str] = []
        for paragraph in paragraphs:
            parts = split_long(paragraph) if count_tokens(paragraph) > MAX_TOKENS \
                else [paragraph]
            for piece in parts:
                if body and count_tokens("\n\n".join([*body, piece])) > TARGET_TOKENS:
                    yield _chunk(heading, body)
                    tail = " ".join(" ".join(body).split()[-overlap_words:])
                    body = [tail] if count_tokens(f"{tail} {piece}") <= MAX_TOKENS else []
                body.append(piece)
        if body:
            yield _chunk(heading, body)


def chunk_text(text: str) -> list[ChunkText]:
    return list(iter_chunks(text))


def embedding_input(chunk: ChunkText) -> str:
    return f"{chunk.heading}\n{chunk.text}" if chunk.heading else chunk.text
