"""The local embeddings are real all-MiniLM-L6-v2: shape, normalisation, known
similarities (paraphrases closer than unrelated sentences), batching changes nothing."""

from __future__ import annotations

import numpy as np

from agents.engine import minilm


def test_vectors_are_384_unit_length():
    encoded = minilm.encode(["A man is eating food.", "hello"])
    assert encoded.vectors.shape == (2, 384)
    assert encoded.vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(encoded.vectors, axis=1), 1.0, atol=1e-5)
    assert encoded.token_counts == [8, 3]  # [CLS] a man is eating food . [SEP]


def test_known_similarities():
    v = minilm.encode([
        "A man is eating food.", "A man is eating a piece of bread.",
        "A man is riding a horse.", "How do I reset my password?",
        "I forgot my password and need to change it", "What is the weather tomorrow?",
    ]).vectors
    sim = v @ v.T
    # The sentence-transformers model card's pair: 0.7553 with the reference implementation.
    assert abs(sim[0, 1] - 0.7553) < 0.01
    assert sim[3, 4] > 0.8
    assert sim[0, 1] > sim[0, 2] > sim[0, 3]
    assert sim[3, 4] > sim[3, 5] + 0.5


def test_batching_and_padding_do_not_change_vectors():
    texts = ["short", "a much longer sentence with quite a few more words in it", "mid size"]
    together = minilm.encode(texts, batch_size=3).vectors
    alone = np.stack([minilm.encode([t]).vectors[0] for t in texts])
    assert np.allclose(together, alone, atol=1e-5)


def test_long_input_is_truncated_to_256_tokens():
    encoded = minilm.encode(["word " * 1000])
    assert encoded.token_counts == [256]
    assert minilm.count_tokens("word " * 1000) == 1000
