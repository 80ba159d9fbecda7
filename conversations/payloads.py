"""The data of conversation events (`conversation.created`): the API representation."""

from __future__ import annotations

from typing import Any

from .models import Conversation


def _iso(value) -> str | None:
    return value.isoformat().replace("+00:00", "Z") if value else None


def conversation_data(conversation: Conversation) -> dict[str, Any]:
    return {
        "id": conversation.pk,
        "contact_id": conversation.contact_id,
        "channel": conversation.channel,
        "status": conversation.status,
        "last_message_at": _iso(conversation.last_message_at),
        "created_at": _iso(conversation.created_at),
        "updated_at": _iso(conversation.updated_at),
    }
