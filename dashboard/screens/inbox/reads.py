"""What the inbox screens show, read through the conversations selectors the API uses.

The list is the API's list: `selectors.conversations_filtered` for the filters and the
keyset paginator (`KeysetCursorPagination`, newest first) for the pages, so a filter or a
cursor the API refuses is refused here the same way (an APIError, shown in #flash). A page
costs a fixed number of queries whatever its length: the rows, the capped total, the
contacts of the page and the members.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from django.http import QueryDict
from django.utils import timezone

from agents.selectors import agent_names
from conversations import cobrowse, handoff, replies, selectors
from conversations.models import (
    CHANNELS,
    Conversation,
    ConversationStatus,
    HandoffStatus,
    Priority,
    Sentiment,
)
from dashboard.paging import paginate
from platform_core.errors import APIError
from platform_core.identity.principal import Principal
from templates.models import MessageTemplate
from templates.selectors import templates_filtered

# The API's list filters (conversations/api/views.py `_FILTERS`), in the form's order.
FILTERS = ("search", "status", "channel", "priority", "sentiment", "assignee_id", "unread",
           "has_agent", "queue", "contact_id")
LIST_PATH = "/dashboard/inbox/list"  # the cursor is bound to this path and the filters
PAGE_SIZE = 25
THREAD_PAGE = 30


def _paginate(queryset, params: QueryDict, path: str, *, limit: int, cursor: str = ""):
    query = params.copy()
    if cursor:
        query["cursor"] = cursor
    return paginate(queryset, query, path, limit=limit)


def filter_params(source: QueryDict) -> QueryDict:
    """Only the list filters that are set (the cursor's fingerprint covers exactly these)."""
    params = QueryDict(mutable=True)
    for name in FILTERS:
        value = (source.get(name) or "").strip()
        if value:
            params[name] = value
    return params


def members_by_id(organization) -> dict[str, Any]:
    return {m.user_id: m.user for m in selectors.assignable_members(organization)}


def filter_choices() -> dict[str, Any]:
    return {"statuses": ConversationStatus.values, "channels": CHANNELS,
            "priorities": Priority.values, "sentiments": Sentiment.values}


@dataclass
class Row:
    conversation: Conversation
    contact_label: str
    assignee: Any = None


@dataclass
class ListPage:
    rows: list[Row]
    next_cursor: str | None
    total: int | None
    params: QueryDict
    members: dict[str, Any] = field(default_factory=dict)

    @property
    def querystring(self) -> str:
        return self.params.urlencode()


def contact_label(contact, fallback: str) -> str:
    if contact is None:
        return fallback
    name = " ".join(p for p in (contact.first_name, contact.last_name) if p)
    return name or contact.phone or contact.email or fallback


def list_page(principal: Principal, source: QueryDict) -> ListPage:
    organization = principal.organization
    params = filter_params(source)
    queryset = selectors.conversations_filtered(Conversation.objects.all(), params,
                                                organization)
    rows, paginator = _paginate(queryset, params, LIST_PATH, limit=PAGE_SIZE,
                                cursor=source.get("cursor", ""))
    contacts = selectors.contacts_by_id(organization, [r.contact_id for r in rows])
    members = members_by_id(organization)
    return ListPage(
        rows=[Row(r, contact_label(contacts.get(r.contact_id), r.contact_id),
                  members.get(r.assignee_id)) for r in rows],
        next_cursor=paginator.next_cursor, total=paginator.total, params=params,
        members=members)


def conversation(conversation_id: str) -> Conversation:
    """The conversation of the current organization (the tenant manager scopes it)."""
    found = (Conversation.objects.select_related("organization")
             .filter(pk=conversation_id).first())
    if found is None:
        raise APIError("NOT_FOUND")
    return found


@dataclass
class Message:
    message: Any
    sender: str


def thread_messages(thread: Conversation, *, contact: str, members: dict[str, Any],
                    cursor: str = "") -> tuple[list[Message], str | None]:
    """The newest THREAD_PAGE messages, oldest first for reading; the cursor of the
    earlier ones."""
    path = f"/dashboard/inbox/{thread.pk}/messages"
    rows, paginator = _paginate(selectors.thread_messages(thread, {}), QueryDict(), path,
                                limit=THREAD_PAGE, cursor=cursor)
    shown = []
    for message in reversed(rows):
        if message.direction == "inbound":
            sender = contact
        else:
            sent_by = (message.metadata or {}).get("sent_by", "")
            user = members.get(sent_by)
            sender = user.email if user is not None else (sent_by or "Platform")
        shown.append(Message(message, sender))
    return shown, paginator.next_cursor


def reply_templates(channel: str) -> list[MessageTemplate]:
    """Approved templates of the channel: what may be sent outside the chat-app window."""
    params = QueryDict(mutable=True)
    params.update({"channel": channel, "status": "approved"})
    return list(templates_filtered(MessageTemplate.objects.all(), params)
                .only("name", "language").order_by("name", "language")[:100])


def reply_context(thread: Conversation, channel: str | None = None) -> dict[str, Any]:
    window = replies.service_window(thread, channel)
    return {"window": window,
            "templates": reply_templates(window.channel) if window.windowed else []}


def snooze_choices() -> list[tuple[str, str]]:
    now = timezone.now().replace(second=0, microsecond=0)
    tomorrow = (now + timedelta(days=1)).replace(hour=9, minute=0)
    return [((now + timedelta(hours=1)).isoformat(), "1 hour"),
            ((now + timedelta(hours=4)).isoformat(), "4 hours"),
            (tomorrow.isoformat(), "Tomorrow 09:00 UTC"),
            ((now + timedelta(days=7)).isoformat(), "1 week")]


def thread_context(principal: Principal, thread: Conversation) -> dict[str, Any]:
    """Everything the thread pane shows: head, state, messages, reply form."""
    organization = principal.organization
    contacts = selectors.contacts_by_id(organization, [thread.contact_id])
    contact = contacts.get(thread.contact_id)
    members = members_by_id(organization)
    label = contact_label(contact, thread.contact_id)
    messages, earlier = thread_messages(thread, contact=label, members=members)
    channels = replies.reply_channels(thread)
    current = thread.reply_channel or thread.channel
    return {
        "conversation": thread,
        "contact": contact,
        "contact_label": label,
        "members": list(members.values()),
        "assignee": members.get(thread.assignee_id),
        "thread_messages": messages,
        "earlier_cursor": earlier,
        "reply_channels": channels if current in channels else [current, *channels],
        "reply_channel": current,
        **reply_context(thread),
        "handoff": handoff_state(thread),
        "cobrowse": cobrowse.latest_session(thread),
        "can_cobrowse": principal.role in cobrowse.AGENT_ROLES,
        "priorities": Priority.values,
        "snooze_choices": snooze_choices(),
    }


def handoff_state(thread: Conversation) -> dict[str, Any]:
    """Who leads the thread: the AI agent or humans, and where a handoff stands."""
    names = agent_names(thread.organization, [thread.ai_agent_id])
    pending = thread.handoff_status == HandoffStatus.PENDING
    return {
        "ai_led": thread.ai_led,
        "agent_name": names.get(thread.ai_agent_id, thread.ai_agent_id),
        "status": thread.handoff_status,
        "pending": pending,
        "clearance": handoff.clearance_status(thread),
        "queue_position": handoff.queue_position(thread) if pending else None,
        "reason": thread.handoff_reason,
        "brief": thread.handoff_brief,
    }
