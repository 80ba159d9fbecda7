"""The one place a conversation change is recorded: an activity row and its event.

Every verb calls `record` in its transaction, so the feed, the webhook event and the change
commit together (the event bus is an outbox).
"""

from __future__ import annotations

from typing import Any

from django.utils import timezone

from platform_core.events.bus import emit
from platform_core.identity.principal import Principal

from .models import Conversation, ConversationActivity
from .payloads import conversation_data

# Called with (conversation, kind) after each recorded change, in its transaction: other
# apps keep state that follows the thread (the AI agents' counters). Registered from an
# AppConfig.ready().
_listeners: list = []


def register_listener(listener) -> None:
    if listener not in _listeners:
        _listeners.append(listener)


def actor_of(principal: Principal | None) -> tuple[str, str]:
    if principal is None:
        return "system", ""
    if principal.user_id:
        return "user", principal.user_id
    return principal.kind, principal.actor_id


def record(conversation: Conversation, kind: str, *, principal: Principal | None = None,
           data: dict[str, Any] | None = None, event: str | None = None,
           actor: tuple[str, str] | None = None) -> ConversationActivity:
    """Write the activity row `kind` and emit `event` (default `conversation.<kind>`) with
    the conversation's representation plus `data` under `change`."""
    actor_type, actor_id = actor or actor_of(principal)
    row = ConversationActivity.objects.for_organization(conversation.organization).create(
        organization=conversation.organization, conversation=conversation, kind=kind,
        actor_type=actor_type, actor_id=actor_id, data=data or {}, created_at=timezone.now())
    payload = conversation_data(conversation)
    payload["change"] = {"kind": kind, "actor_type": actor_type, "actor_id": actor_id,
                         **(data or {})}
    emit(organization=conversation.organization, type=event or f"conversation.{kind}",
         data=payload)
    for listener in _listeners:
        listener(conversation, kind)
    return row
