"""Grounded answers (Document 3, 4.2 `answers`).

The question retrieves chunks (hybrid); the confidence is the best cosine similarity among
them. Below `min_confidence` (or with nothing retrieved) the answer says it does not know
and no model is called. Otherwise the engine answers from the retrieved chunks only, each
given as a numbered source; every chunk given is cited and its document's
`last_cited_at` is stamped.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.utils import timezone

from agents import engine
from platform_core.tenancy.models import Organization

from .models import Document
from .retrieval import Hit, retrieve

DEFAULT_MIN_CONFIDENCE = 0.3
DONT_KNOW = "I don't know: the knowledge base has no answer to this question."
INSTRUCTIONS = ("Answer using only the numbered sources given as system messages; cite "
                "them like [1]. If they do not contain the answer, say you do not know.")


@dataclass
class Answer:
    answer: str
    answered: bool
    confidence: float
    citations: list[Hit] = field(default_factory=list)
    model: str | None = None
    usage: dict[str, Any] | None = None


def record_citations(document_ids: set[str]) -> None:
    """The one place an answer's cited documents are known: stamps `last_cited_at` (read by
    the staleness scorecard). Anything else that must follow a citation hooks in here."""
    if document_ids:
        Document.objects.filter(pk__in=document_ids).update(last_cited_at=timezone.now())


def answer(organization: Organization, question: str, *,
           knowledge_base_ids: list[str] | None = None, limit: int = 8,
           threshold: float | None = None, min_confidence: float | None = None,
           language: str | None = None) -> Answer:
    floor = DEFAULT_MIN_CONFIDENCE if min_confidence is None else min_confidence
    hits = retrieve(organization, question, knowledge_base_ids=knowledge_base_ids,
                    limit=limit, threshold=threshold, feature="kb.answer")
    confidence = max((h.similarity for h in hits), default=0.0)
    if not hits or confidence < floor:
        return Answer(answer=DONT_KNOW, answered=False, confidence=round(confidence, 4))
    ask = question.strip()
    if not ask.endswith("?"):
        ask += "?"  # the local engine answers a question from context, not a statement
    prefix = f"{INSTRUCTIONS} Answer in {language}. " if language else f"{INSTRUCTIONS} "
    messages = [{"role": "system", "content": f"[{i}] {h.text}"}
                for i, h in enumerate(hits, start=1)]
    messages.append({"role": "user", "content": f"{prefix}Question: {ask}"})
    result = engine.complete(organization, messages, feature="kb.answer", max_tokens=512)
    record_citations({h.document_id for h in hits})
    return Answer(answer=result.content or DONT_KNOW, answered=True,
                  confidence=round(confidence, 4), citations=hits, model=result.model,
                  usage={"prompt_tokens": result.prompt_tokens,
                         "completion_tokens": result.completion_tokens})
