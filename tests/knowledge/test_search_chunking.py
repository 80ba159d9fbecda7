"""Structure-aware chunking (knowledge/chunking.py): sizes, headings, overlap."""

from __future__ import annotations

from knowledge import chunking


def _paragraph(n: int, words: int = 60) -> str:
    return " ".join(f"w{n}x{i}" for i in range(words - 1)) + " end."


def test_chunks_stay_within_the_token_bounds_and_never_cross_a_heading():
    text = "# Guide\n\n" + "\n\n".join(_paragraph(i) for i in range(12)) + \
           "\n\n## Billing\n\nShort billing section."
    chunks = chunking.chunk_text(text)
    body = [c for c in chunks if c.heading == "Guide"]
    assert len(body) >= 3
    assert all(c.token_count <= chunking.MAX_TOKENS for c in chunks)
    assert all(c.token_count >= 200 for c in body[:-1])  # packed towards ~300
    assert chunks[-1].heading == "Guide > Billing"
    assert chunks[-1].text == "Short billing section."


def test_each_further_chunk_starts_with_the_tail_of_the_previous_one():
    text = "# Guide\n\n" + "\n\n".join(_paragraph(i) for i in range(12))
    first, second = chunking.chunk_text(text)[:2]
    tail = first.text.split()[-chunking._words_for(chunking.OVERLAP_TOKENS):]
    assert second.text.split()[:len(tail)] == tail


def test_a_long_paragraph_is_cut_at_sentences_and_an_endless_sentence_at_words():
    sentences = " ".join(f"Sentence {i} has a handful of ordinary words in it." for i in
                         range(120))
    endless = " ".join(f"word{i}" for i in range(1200))
    chunks = chunking.chunk_text(f"{sentences}\n\n{endless}")
    assert len(chunks) > 4
    assert all(c.token_count <= chunking.MAX_TOKENS for c in chunks)
    assert chunks[0].text.endswith(".")  # cut at a sentence end


def test_headings_inside_fenced_code_are_text():
    chunks = chunking.chunk_text("# Setup\n\n```\n# not a heading\n```\n\nDone.")
    assert {c.heading for c in chunks} == {"Setup"}
    assert "# not a heading" in chunks[0].text
    assert chunking.embedding_input(chunks[0]).startswith("Setup\n")
