"""The data of conversation events: the API representation of the thread."""

from __future__ import annotations

from typing import Any

from platform_core.api.serialization import iso_utc

from .models import Conversation


def _iso(value) -> str | None:
    return iso_utc(value) if value else None


def conversation_data(conversation: Conversation) -> dict[str, Any]:
    return {
        "id": conversation.pk,
        "contact_id": conversation.contact_id,
        "channel": conversation.channel,
        "status": conversation.status,
        "priority": conversation.priority,
        "tags": list(conversation.tags or []),
        "assignee_id": conversation.assignee_id,
        "assignment_status": conversation.assignment_status,
        "queue": conversation.queue or None,
        "sentiment": conversation.sentiment,
        "unread_count": conversation.unread_count,
        "ai_led": conversation.ai_led,
        "handoff_status": conversation.handoff_status,
        "snoozed_until": _iso(conversation.snoozed_until),
        "merged_into_id": conversation.merged_into_id,
        "last_message_at": _iso(conversation.last_message_at),
        "created_at": _iso(conversation.created_at),
        "updated_at": _iso(conversation.updated_at),
    }
