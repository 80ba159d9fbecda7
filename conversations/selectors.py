"""Reads of conversations: the inbox filters, the thread, the feeds."""

from __future__ import annotations

from django.db.models import Q, QuerySet

from platform_core.errors import validation_error

from .models import CHANNELS, ConversationActivity, ConversationStatus, Priority, Sentiment
from .side_models import SideConversation

SEARCH_MAX = 200
_TRUE, _FALSE = ("true", "1", "yes"), ("false", "0", "no")


def _flag(params, name: str) -> bool | None:
    raw = params.get(name)
    if raw in (None, ""):
        return None
    value = raw.lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise validation_error(name, f"{name} must be true or false.", status=400)


def _choice(params, name: str, values) -> str | None:
    raw = params.get(name)
    if raw in (None, ""):
        return None
    if raw not in values:
        raise validation_error(name, f"{name} must be one of {', '.join(values)}.", status=400)
    return raw


def conversations_filtered(queryset: QuerySet, params, organization) -> QuerySet:
    """The list filters of Document 2, 2.5: `status`, `channel`, `sentiment`, `unread`,
    `has_agent`, `search` (contact name, phone, email; message text), `priority`, plus
    `contact_id`, `assignee_id` and `queue`. Each is served by an index (models.py)."""
    for name, values in (("status", ConversationStatus.values), ("channel", CHANNELS),
                         ("sentiment", Sentiment.values), ("priority", Priority.values)):
        value = _choice(params, name, values)
        if value:
            queryset = queryset.filter(**{name: value})
    unread = _flag(params, "unread")
    if unread is not None:
        queryset = queryset.filter(unread_count__gt=0) if unread else queryset.filter(
            unread_count=0)
    has_agent = _flag(params, "has_agent")
    if has_agent is not None:
        queryset = queryset.filter(assignee_id__isnull=not has_agent)
    for name in ("contact_id", "assignee_id", "queue"):
        value = params.get(name)
        if value:
            queryset = queryset.filter(**{name: value})
    search = (params.get("search") or "").strip()
    if search:
        if len(search) > SEARCH_MAX:
            raise validation_error("search", f"search is at most {SEARCH_MAX} characters.",
                                   status=400)
        queryset = queryset.filter(_search(search, organization))
    return queryset


def _search(text: str, organization) -> Q:
    from contacts.models import Contact
    from messaging.models import Message

    contacts = Contact.objects.for_organization(organization).filter(
        Q(first_name__icontains=text) | Q(last_name__icontains=text)
        | Q(phone__icontains=text) | Q(email__icontains=text)).values("pk")
    threads = Message.objects.for_organization(organization).filter(
        conversation_id__isnull=False, body__icontains=text).values("conversation_id")
    return Q(contact_id__in=contacts) | Q(pk__in=threads)


def contacts_by_id(organization, ids) -> dict:
    """One query for the contact summaries of a page."""
    from contacts.models import Contact

    ids = {i for i in ids if i}
    if not ids:
        return {}
    return {c.pk: c for c in Contact.objects.for_organization(organization).filter(pk__in=ids)
            .only("id", "first_name", "last_name", "phone", "email")}


def thread_messages(conversation, params) -> QuerySet:
    """The thread's messages; `participant_id` keeps one participant's: the contact's
    inbound messages or a member's (or key's) replies."""
    from messaging.models import Message

    rows = Message.objects.for_organization(conversation.organization).filter(
        conversation_id=conversation.pk)
    participant = params.get("participant_id")
    if participant:
        rows = rows.filter(Q(direction="inbound", contact_id=participant)
                           | Q(direction="outbound", metadata__sent_by=participant))
    return rows


def activity_of(conversation) -> QuerySet:
    return ConversationActivity.objects.for_organization(conversation.organization).filter(
        conversation=conversation)


def side_conversations_of(conversation) -> QuerySet:
    return SideConversation.objects.for_organization(conversation.organization).filter(
        conversation=conversation)


def assignable_members(organization) -> list:
    """The members a conversation can be assigned to (`assign` takes any member), with
    their user loaded: the assignee chooser and the names of a page's assignees."""
    from platform_core.tenancy.models import Membership

    return list(Membership.objects.for_organization(organization)
                .filter(user__is_active=True).select_related("user")
                .only("user_id", "role", "user__email", "user__name")
                .order_by("user__email")[:500])
