"""Direct messages: one thread per pair of users; only its two participants see it (anyone
else gets 404, as for a thread that does not exist)."""

from __future__ import annotations

from django.db import IntegrityError, transaction
from django.db.models import Count, F, Q, QuerySet

from platform_core.errors import APIError, validation_error
from platform_core.identity.principal import Principal

from . import conf, live, render, services
from .models import ChatMessage, DMThread

PREVIEW_CHARS = 140


def thread_for(user_id: str, thread_id: str) -> DMThread:
    thread = (DMThread.objects.filter(pk=thread_id)
              .filter(Q(user_low_id=user_id) | Q(user_high_id=user_id)).first())
    if thread is None:
        raise APIError("NOT_FOUND")
    return thread


def _thread_between(org, a: str, b: str) -> DMThread:
    low, high = sorted((a, b))
    thread = DMThread.objects.filter(user_low_id=low, user_high_id=high).first()
    if thread is not None:
        return thread
    try:
        with transaction.atomic():
            return DMThread.objects.create(organization=org, user_low_id=low, user_high_id=high)
    except IntegrityError:  # created concurrently
        return DMThread.objects.get(user_low_id=low, user_high_id=high)


def dm_send(*, principal: Principal, sender_id: str, user_id: str, body: str,
            mentions: list[str] | None = None, attachments: list[str] | None = None
            ) -> ChatMessage:
    if user_id == sender_id:
        raise validation_error("user_id", "A direct message needs another user.")
    services._org_user(principal.organization, user_id)
    mentions = services.check_mentions(mentions or [], {sender_id, user_id})
    attachments = services.check_attachments(attachments or [])
    thread = _thread_between(principal.organization, sender_id, user_id)
    return dm_post(thread=thread, sender_id=sender_id, body=body, mentions=mentions,
                   attachments=attachments)


def dm_post(*, thread: DMThread, sender_id: str, body: str, mentions: list[str],
            attachments: list[str]) -> ChatMessage:
    with transaction.atomic():
        msg = ChatMessage.objects.create(
            organization_id=thread.organization_id, dm_thread=thread,
            sender_user_id=sender_id, body=body, mentions=mentions, attachments=attachments)
        marker = ("low_last_read_message_id" if sender_id == thread.user_low_id
                  else "high_last_read_message_id")
        DMThread.objects.filter(pk=thread.pk).update(
            last_message_id=msg.pk, last_message_at=msg.created_at,
            last_preview=body[:PREVIEW_CHARS], **{marker: msg.pk})
        msg = ChatMessage.objects.select_related("sender_user").get(pk=msg.pk)
        live.publish([live.user_group(thread.user_low_id), live.user_group(thread.user_high_id)],
                     {"type": "message.created", "thread_id": thread.pk,
                      "message": render.message(msg)})
    return msg


def dm_read(*, thread: DMThread, user_id: str, message_id: str | None) -> str:
    if message_id:
        if not ChatMessage.objects.filter(dm_thread=thread, pk=message_id).exists():
            raise validation_error("message_id", "No such message in this thread.")
        target = message_id
    else:
        target = thread.last_message_id
    field = ("low_last_read_message_id" if user_id == thread.user_low_id
             else "high_last_read_message_id")
    DMThread.objects.filter(pk=thread.pk, **{f"{field}__lt": target}).update(**{field: target})
    return max(target, getattr(thread, field))


def thread_with(user_id: str, other_user_id: str) -> DMThread | None:
    """The DM thread between two users, if they have one (it starts with a first message)."""
    low, high = sorted((user_id, other_user_id))
    return DMThread.objects.filter(user_low_id=low, user_high_id=high).first()


def my_threads(user_id: str) -> QuerySet[DMThread]:
    """The caller's threads with at least one message (most recent first via the
    paginator's ("-last_message_id", "-id") ordering)."""
    return (DMThread.objects.filter(Q(user_low_id=user_id) | Q(user_high_id=user_id))
            .exclude(last_message_id=""))


def unread_counts(user_id: str, thread_ids: list[str]) -> dict[str, int]:
    """Unread messages per thread for `user_id`, one query, capped."""
    if not thread_ids:
        return {}
    mine_low = Q(dm_thread__user_low_id=user_id,
                 id__gt=F("dm_thread__low_last_read_message_id"))
    mine_high = Q(dm_thread__user_high_id=user_id,
                  id__gt=F("dm_thread__high_last_read_message_id"))
    rows = (ChatMessage.objects
            .filter(dm_thread_id__in=thread_ids, deleted_at__isnull=True)
            .filter(mine_low | mine_high)
            .exclude(sender_user_id=user_id)
            .values("dm_thread_id").annotate(n=Count("id")))
    cap = conf.unread_cap()
    return {row["dm_thread_id"]: min(row["n"], cap) for row in rows}


def thread_messages(thread: DMThread) -> QuerySet[ChatMessage]:
    return (ChatMessage.objects.filter(dm_thread=thread, deleted_at__isnull=True)
            .select_related("sender_user"))
