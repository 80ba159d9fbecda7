"""Read-side AI: the sentiment timeline and the outcome prediction of a thread."""

from __future__ import annotations

from typing import Any

from django.utils import timezone

from platform_core.api.serialization import iso_utc

from . import ai
from .models import Conversation

TIMELINE_MAX = 500


def sentiment_timeline(conversation: Conversation) -> dict[str, Any]:
    """One point per inbound message, oldest to newest (the latest TIMELINE_MAX)."""
    from messaging.models import Message

    rows = list(Message.objects.for_organization(conversation.organization)
                .filter(conversation_id=conversation.pk, direction="inbound")
                .order_by("-id").values_list("id", "body", "created_at")[:TIMELINE_MAX])
    points = []
    for message_id, body, at in reversed(rows):
        score, label = ai.sentiment(body)
        points.append({"message_id": message_id, "at": at, "score": score, "label": label})
    scores = [p["score"] for p in points]
    return {"conversation_id": conversation.pk, "current": conversation.sentiment,
            "average": round(sum(scores) / len(scores), 2) if scores else None,
            "points": points}


def prediction(conversation: Conversation, *, refresh: bool) -> dict[str, Any]:
    """The cached outcome prediction; computed when absent or asked (`refresh`)."""
    if conversation.prediction and not refresh:
        return {**conversation.prediction, "cached": True}
    scores = [p["score"] for p in sentiment_timeline(conversation)["points"]]
    result = ai.predict_outcome(
        scores=scores, status=conversation.status, priority=conversation.priority,
        escalated=conversation.escalated_at is not None,
        unread_count=conversation.unread_count, assigned=bool(conversation.assignee_id))
    result = {"conversation_id": conversation.pk, **result,
              "computed_at": iso_utc(timezone.now())}
    Conversation.objects.for_organization(conversation.organization).filter(
        pk=conversation.pk).update(prediction=result)
    return {**result, "cached": False}
