"""What the local engine really computes from text: sentences, extractive summaries over
the embeddings, lexicon sentiment, nearest-example intent. Deterministic, no network."""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from . import minilm

_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
_WORD = re.compile(r"[a-z']+")

# A small sentiment lexicon (weights -3..3, after AFINN's scale), with negation flipping.
_LEXICON = {
    **dict.fromkeys(("love", "amazing", "excellent", "fantastic", "perfect", "wonderful",
                     "awesome", "outstanding", "delighted"), 3),
    **dict.fromkeys(("great", "happy", "glad", "thanks", "thank", "pleased", "helpful",
                     "good", "nice", "like", "easy", "fast", "quick", "resolved", "works",
                     "recommend", "appreciate", "satisfied"), 2),
    **dict.fromkeys(("ok", "okay", "fine", "fair"), 1),
    **dict.fromkeys(("slow", "late", "confusing", "difficult", "problem", "issue", "wrong",
                     "delay", "delayed", "missing", "expensive", "unhappy", "disappointed",
                     "cancel", "error", "fail", "failed", "broken", "bug"), -2),
    **dict.fromkeys(("bad", "poor", "annoying", "frustrated", "frustrating", "refund",
                     "complaint", "never", "waste"), -2),
    **dict.fromkeys(("terrible", "awful", "horrible", "worst", "hate", "angry", "scam",
                     "useless", "furious", "unacceptable", "ridiculous"), -3),
}
_NEGATORS = frozenset({"not", "no", "never", "don't", "doesn't", "didn't", "isn't", "wasn't",
                       "can't", "cannot", "won't", "hardly"})


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE.split(text or "") if s.strip()]


def words(text: str) -> list[str]:
    return _WORD.findall((text or "").lower())


@dataclass
class Sentiment:
    label: str  # positive, negative, neutral
    score: float  # -1..1
    matched: list[str]


def sentiment(text: str) -> Sentiment:
    tokens = words(text)
    total, matched = 0, []
    for i, token in enumerate(tokens):
        weight = _LEXICON.get(token)
        if weight is None:
            continue
        if any(t in _NEGATORS for t in tokens[max(0, i - 2):i]):
            weight = -weight
        total += weight
        matched.append(token)
    score = max(-1.0, min(1.0, total / (3 * max(len(matched), 1)))) if matched else 0.0
    label = "positive" if score >= 0.2 else "negative" if score <= -0.2 else "neutral"
    return Sentiment(label=label, score=round(score, 3), matched=matched)


def extractive_summary(text: str, max_sentences: int = 3) -> list[str]:
    """The sentences closest to the text's centroid embedding, in their original order."""
    found = sentences(text)
    if len(found) <= max_sentences:
        return found
    vectors = minilm.encode(found).vectors
    centroid = vectors.mean(0)
    scores = vectors @ centroid
    keep = sorted(np.argsort(-scores)[:max_sentences])
    return [found[i] for i in keep]


def nearest(query: str, candidates: list[str]) -> tuple[int, float]:
    """Index and cosine similarity of the candidate closest in meaning to `query`."""
    encoded = minilm.encode([query, *candidates]).vectors
    scores = encoded[1:] @ encoded[0]
    best = int(np.argmax(scores))
    return best, float(scores[best])


def keywords(text: str, limit: int = 5) -> list[str]:
    """The most frequent content words (a stop-word list keeps the function words out)."""
    counts: dict[str, int] = {}
    for word in words(text):
        if len(word) > 3 and word not in _STOP:
            counts[word] = counts.get(word, 0) + 1
    return [w for w, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:limit]]


_STOP = frozenset("""about above after again against all also and any are because been before
being below between both but can could did does doing down during each few for from further
had has have having here hers herself him himself his how into its itself just more most
other our ours ourselves out over own same she should some such than that the their theirs
them themselves then there these they this those through too under until very was were what
when where which while who whom why will with would you your yours yourself yourselves
please thank thanks hello hi""".split())  # noqa: SIM905  (a readable word list)
