"""Writes of conversations: find or open the one open thread of a contact on a channel.

`conversation_for_inbound` is what the inbound pipeline calls for every received message
(messaging contract); `conversation_open` backs `POST /api/v1/conversations`. Both go
through `_open_or_continue`, which is safe under concurrency without locks: the new row is
inserted with `INSERT ... ON CONFLICT DO NOTHING` against the partial unique index of open
threads, then the open thread of the pair is read back. Whoever inserted first wins; the
others continue that thread. (PostgreSQL makes the losing INSERT wait for the winner's
transaction, so the read-back sees it.) Only the winner emits `conversation.created`.
"""

from __future__ import annotations

from datetime import datetime

from django.db import transaction
from django.utils import timezone

from platform_core.audit.services import audit_record
from platform_core.events.bus import emit
from platform_core.identity.principal import Principal

from .models import Conversation, ConversationStatus
from .payloads import conversation_data


def _open_or_continue(
    *, organization, contact_id: str, channel: str, last_message_at: datetime | None = None
) -> tuple[Conversation, bool]:
    rows = Conversation.objects.for_organization(organization)
    existing = rows.filter(contact_id=contact_id, channel=channel,
                           status=ConversationStatus.OPEN).first()
    if existing is not None:
        return existing, False
    candidate = Conversation(organization=organization, contact_id=contact_id,
                             channel=channel, status=ConversationStatus.OPEN,
                             last_message_at=last_message_at, created_at=timezone.now())
    rows.bulk_create([candidate], ignore_conflicts=True)
    thread = rows.get(contact_id=contact_id, channel=channel, status=ConversationStatus.OPEN)
    return thread, thread.pk == candidate.pk


@transaction.atomic
def conversation_for_inbound(*, organization, contact_id: str, channel: str,
                             at: datetime | None = None) -> Conversation:
    """The open thread of `contact_id` on `channel`, created when there is none.

    Stamps `last_message_at` (the inbound message's time, `at`, default now). A new thread
    emits `conversation.created` and writes an audit row by the system actor.
    """
    at = at or timezone.now()
    conversation, created = _open_or_continue(organization=organization, contact_id=contact_id,
                                              channel=channel, last_message_at=at)
    if conversation.last_message_at is None or conversation.last_message_at < at:
        Conversation.objects.for_organization(organization).filter(pk=conversation.pk).update(
            last_message_at=at, updated_at=timezone.now())
        conversation.last_message_at = at
    if created:
        audit_record(action="conversation.created", organization=organization,
                     actor_type="system", actor_id="inbound", target=conversation,
                     metadata={"channel": channel, "contact_id": contact_id,
                               "source": "inbound"})
        emit(organization=organization, type="conversation.created",
             data=conversation_data(conversation))
    return conversation


@transaction.atomic
def conversation_open(*, principal: Principal, contact_id: str, channel: str,
                      request=None) -> tuple[Conversation, bool]:
    """The thread of the pair for `POST /api/v1/conversations`: (conversation, created)."""
    organization = principal.organization
    conversation, created = _open_or_continue(organization=organization,
                                              contact_id=contact_id, channel=channel)
    if created:
        audit_record(action="conversation.created", principal=principal, target=conversation,
                     request=request, metadata={"channel": channel, "contact_id": contact_id})
        emit(organization=organization, type="conversation.created",
             data=conversation_data(conversation))
    return conversation, created
