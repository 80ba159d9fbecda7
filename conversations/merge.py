"""Merging two threads: the source's messages move into the target, the source is archived.

The weak-identity rule (Document 1, 7): when the two threads belong to different contacts
whose only overlap is a phone number or email (the contacts' own, or the addresses their
inbound messages came from), the merge answers 422
`WEAK_IDENTITY_MATCH_REQUIRES_CONFIRMATION` unless the caller confirms with
`confirm_weak_identity: true`. Threads of contacts with nothing in common are not merged.
"""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from platform_core.errors import APIError, validation_error
from platform_core.identity.principal import Principal

from . import routing
from .activity import record
from .models import LIVE_STATUSES, AssignmentStatus, Conversation, ConversationStatus
from .services import _save, unassign_fields


def _identities(organization, conversation: Conversation) -> set[tuple[str, str]]:
    """The phone numbers and emails a thread is known by: its contact's, and the
    addresses its inbound messages came from (a contact's details may have changed)."""
    from contacts.models import Contact
    from messaging.models import Message

    found: set[tuple[str, str]] = set()
    contact = (Contact.objects.for_organization(organization)
               .filter(pk=conversation.contact_id).only("phone", "email").first())
    addresses = list(Message.objects.for_organization(organization)
                     .filter(conversation_id=conversation.pk, direction="inbound")
                     .values_list("from_address", flat=True).distinct()[:50])
    if contact is not None:
        addresses += [contact.phone, contact.email]
    for address in addresses:
        if address and "@" in address:
            found.add(("email", address.lower()))
        elif address:
            found.add(("phone", address))
    return found


def _overlap(organization, first: Conversation, second: Conversation) -> list[str]:
    shared = _identities(organization, first) & _identities(organization, second)
    return sorted({kind for kind, _value in shared})


@transaction.atomic
def conversation_merge(*, principal: Principal, conversation_id: str, source_id: str,
                       confirm_weak_identity: bool = False) -> Conversation:
    from messaging.models import Message

    if source_id == conversation_id:
        raise validation_error("source_conversation_id", "A conversation cannot absorb itself.")
    rows = {c.pk: c for c in Conversation.objects.for_organization(principal.organization)
            .select_for_update(of=("self",)).select_related("organization")
            .filter(pk__in=[conversation_id, source_id]).order_by("pk")}
    target = rows.get(conversation_id)
    if target is None:
        raise APIError("NOT_FOUND")
    source = rows.get(source_id)
    if source is None:
        raise validation_error("source_conversation_id", "No conversation with this id.")
    if target.status not in LIVE_STATUSES:
        raise APIError("CONFLICT", "Reopen the conversation before merging into it.",
                       details={"status": target.status})
    if source.status == ConversationStatus.ARCHIVED:
        raise APIError("CONFLICT", "The source conversation is archived (merged already).",
                       details={"status": source.status,
                                "merged_into_id": source.merged_into_id})
    if source.contact_id != target.contact_id:
        shared = _overlap(principal.organization, target, source)
        if not shared:
            raise validation_error("source_conversation_id",
                                   "The two conversations belong to unrelated contacts.")
        if not confirm_weak_identity:
            raise APIError(
                "WEAK_IDENTITY_MATCH_REQUIRES_CONFIRMATION",
                details={"shared": shared, "contact_ids": [target.contact_id,
                                                           source.contact_id],
                         "confirm_with": {"confirm_weak_identity": True}})
    moved = (Message.objects.for_organization(principal.organization)
             .filter(conversation_id=source.pk).update(conversation_id=target.pk))
    # The source: archived, out of the queue, its agent's capacity freed.
    if routing.holds_capacity(source):
        routing.release(source.organization, source.assignee_id)
    fields = ["status", "merged_into_id", "waiting_since", "unread_count", "closed_at"]
    if source.assignment_status == AssignmentStatus.OFFERED:
        fields += unassign_fields(source)
    source.status = ConversationStatus.ARCHIVED
    source.merged_into_id = target.pk
    source.waiting_since = None
    unread = source.unread_count
    source.unread_count = 0
    source.closed_at = source.closed_at or timezone.now()
    _save(source, *fields)
    # The target: tags, unread and the latest message of both.
    target.tags = list(dict.fromkeys([*(target.tags or []), *(source.tags or [])]))
    target.unread_count += unread
    target_fields = ["tags", "unread_count"]
    if source.last_message_at and (not target.last_message_at
                                   or source.last_message_at > target.last_message_at):
        target.last_message_at = source.last_message_at
        target.last_message_preview = source.last_message_preview
        target.last_message_direction = source.last_message_direction
        target_fields += ["last_message_at", "last_message_preview", "last_message_direction"]
    _save(target, *target_fields)
    record(source, "merged_into", principal=principal, event="conversation.archived",
           data={"merged_into_id": target.pk})
    record(target, "merged", principal=principal,
           data={"source_conversation_id": source.pk, "messages_moved": moved,
                 "weak_identity_confirmed": source.contact_id != target.contact_id})
    return target
