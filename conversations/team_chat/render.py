"""The JSON shapes of team-chat records (Document 2, 2.6), built without DRF on the hot
paths (history pages, live events); api/serializers.py documents the same shapes."""

from __future__ import annotations

import hashlib
from datetime import datetime
from typing import Any

from platform_core.api.serialization import iso_utc

from .models import ChatMessage, DMThread, TeamChannel


def iso(value: datetime | None) -> str | None:
    if value is None:
        return None
    return iso_utc(value)


def avatar_url(email: str) -> str:
    """Gravatar by the SHA-256 of the address (an identicon when the user has none)."""
    digest = hashlib.sha256(email.strip().lower().encode()).hexdigest()
    return f"https://gravatar.com/avatar/{digest}?d=identicon"


def message(msg: ChatMessage) -> dict[str, Any]:
    """A message; `sender_user` must be loaded (select_related) by the caller."""
    sender = msg.sender_user if msg.sender_user_id else None
    person = sender is not None and sender.is_active
    return {
        "id": msg.pk,
        "channel_id": msg.channel_id,
        "thread_id": msg.dm_thread_id,
        "sender_user_id": msg.sender_user_id,
        "body": msg.body,
        "mentions": list(msg.mentions),
        "attachments": list(msg.attachments),
        "created_at": iso(msg.created_at),
        "edited_at": iso(msg.edited_at),
        "parent_message_id": msg.parent_id,
        "reply_count": msg.reply_count,
        "last_reply_at": iso(msg.last_reply_at),
        "sender_name": (sender.name or sender.email) if person else None,
        "sender_avatar_url": avatar_url(sender.email) if person else None,
    }


def root_entry(msg: ChatMessage) -> dict[str, Any]:
    """A history row: the thread root, or `root: null` once it was deleted."""
    return {
        "id": msg.pk,
        "created_at": iso(msg.created_at),
        "root": None if msg.is_deleted else message(msg),
        "reply_count": msg.reply_count,
        "last_reply_at": iso(msg.last_reply_at),
    }


def channel(ch: TeamChannel, *, my_role: str | None, unread_count: int | None = None
            ) -> dict[str, Any]:
    data = {
        "id": ch.pk,
        "name": ch.name,
        "description": ch.description,
        "created_by_user_id": ch.created_by_user_id,
        "created_at": iso(ch.created_at),
        "updated_at": iso(ch.updated_at),
        "my_role": my_role,
    }
    if unread_count is not None:
        data["unread_count"] = unread_count
    return data


def dm_summary(thread: DMThread, *, me: str, unread_count: int) -> dict[str, Any]:
    return {
        "id": thread.pk,  # the same as thread_id, as every other list item has `id`
        "thread_id": thread.pk,
        "participant_ids": [thread.user_low_id, thread.user_high_id],
        "other_user_id": thread.other_user_id(me),
        "last_message_id": thread.last_message_id or None,
        "last_message_at": iso(thread.last_message_at),
        "last_message_preview": thread.last_preview,
        "unread_count": unread_count,
        "created_at": iso(thread.created_at),
    }
