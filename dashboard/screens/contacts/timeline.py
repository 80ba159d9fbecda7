"""A contact's timeline: its messages, conversations and tracked events, newest first.

Each source is read through its family's own selector (the filters of `GET /messages`
and `GET /conversations` with `contact_id`, and `contacts.selectors.tracked_events_of`),
and only when the signed-in role may read that family; three queries in all.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.http import QueryDict

from contacts import selectors as contact_selectors
from contacts.models import Contact
from conversations import selectors as conversation_selectors
from conversations.models import Conversation
from messaging import selectors as message_selectors
from messaging.models import Message
from platform_core.identity.principal import Principal

LIMIT = 50


@dataclass(frozen=True)
class Entry:
    kind: str  # message, conversation, event
    at: datetime
    title: str
    detail: str
    badge: str
    link: str = ""


def _params(**values: str) -> QueryDict:
    query = QueryDict(mutable=True)
    query.update(values)
    return query


def contact_timeline(contact: Contact, principal: Principal, *, limit: int = LIMIT
                     ) -> list[Entry]:
    organization = contact.organization
    entries: list[Entry] = []
    if principal.has_scope("messages:read"):
        messages = message_selectors.messages_filtered(
            Message.objects.for_organization(organization), _params(contact_id=contact.pk),
            organization=organization).order_by("-created_at")[:limit]
        entries += [Entry(kind="message", at=m.created_at,
                          title=f"{m.get_direction_display()} {m.channel} message",
                          detail=m.subject or m.body, badge=m.status)
                    for m in messages]
    if principal.has_scope("conversations:read"):
        conversations = conversation_selectors.conversations_filtered(
            Conversation.objects.for_organization(organization),
            _params(contact_id=contact.pk), organization).order_by("-created_at")[:limit]
        entries += [Entry(kind="conversation", at=c.created_at,
                          title=f"Conversation on {c.channel}",
                          detail=c.last_message_preview, badge=c.status,
                          link=f"/dashboard/inbox/{c.pk}")
                    for c in conversations]
    if principal.has_scope("events:read"):
        entries += [Entry(kind="event", at=e.occurred_at, title=f"Event {e.name}",
                          detail=", ".join(f"{k}: {v}" for k, v in
                                           list((e.properties or {}).items())[:5]),
                          badge="event")
                    for e in contact_selectors.tracked_events_of(contact, limit=limit)]
    entries.sort(key=lambda entry: entry.at, reverse=True)
    return entries[:limit]
