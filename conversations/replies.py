"""Replies: to the contact on the thread's channel, and in side conversations.

A reply goes through the messaging pipeline (`message_send`: validation, opt-outs,
providers, test mode) and answers 202 with the queued message.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.db import transaction
from django.utils import timezone

from platform_core.errors import APIError, validation_error
from platform_core.identity.principal import Principal

from .activity import record
from .models import CHANNELS, WINDOWED_CHANNELS, Conversation, ConversationStatus
from .services import _save, locked
from .side_models import SideConversation, SideMessage

SERVICE_WINDOW = timedelta(hours=24)
_PHONE_CHANNELS = ("sms", "mms", "whatsapp", "rcs", "voice")


def _contact(conversation: Conversation):
    from contacts.models import Contact

    return (Contact.objects.for_organization(conversation.organization)
            .filter(pk=conversation.contact_id).only("phone", "email").first())


def _address(contact, channel: str) -> str | None:
    if contact is None:
        return None
    if channel == "email":
        return contact.email or None
    return contact.phone or None if channel in _PHONE_CHANNELS else None


def contact_address(conversation: Conversation, channel: str) -> str | None:
    return _address(_contact(conversation), channel)


def reply_channels(conversation: Conversation) -> list[str]:
    """The channels a reply can take: those the contact has an address for (one read)."""
    contact = _contact(conversation)
    return [channel for channel in CHANNELS if _address(contact, channel)]


@dataclass(frozen=True)
class ServiceWindow:
    """The chat-app customer-service window of a thread on `channel`: free-form replies
    only within SERVICE_WINDOW of the contact's last inbound message there."""

    channel: str
    last_inbound_at: datetime | None

    @property
    def windowed(self) -> bool:
        return self.channel in WINDOWED_CHANNELS

    @property
    def closes_at(self) -> datetime | None:
        return self.last_inbound_at + SERVICE_WINDOW if self.last_inbound_at else None

    @property
    def templates_only(self) -> bool:
        return self.windowed and (self.closes_at is None or self.closes_at < timezone.now())


def service_window(conversation: Conversation, channel: str | None = None) -> ServiceWindow:
    channel = channel or conversation.reply_channel or conversation.channel
    last = _last_inbound(conversation, channel)
    return ServiceWindow(channel, last.created_at if last is not None else None)


def _last_inbound(conversation: Conversation, channel: str):
    from messaging.models import Message

    return (Message.objects.for_organization(conversation.organization)
            .filter(contact_id=conversation.contact_id, channel=channel, direction="inbound")
            .order_by("-created_at").only("to", "created_at").first())


def reply_sender(conversation: Conversation) -> dict[str, Any]:
    """Who a reply comes from: the address the contact last wrote to on the reply channel
    (`source: last_inbound`), else the channel's default sender picked at send time."""
    channel = conversation.reply_channel or conversation.channel
    last = _last_inbound(conversation, channel)
    if last is not None and last.to:
        return {"channel": channel, "from": last.to, "source": "last_inbound"}
    return {"channel": channel, "from": None, "source": "channel_default"}


@transaction.atomic
def conversation_reply(*, principal: Principal, conversation_id: str, body: str | None = None,
                       channel: str | None = None, subject: str | None = None,
                       media_url: Any = None, template_name: str | None = None,
                       language: str | None = None, variables: dict | None = None):
    from messaging.sending.accept import message_send

    conversation = locked(principal, conversation_id)
    if conversation.status != ConversationStatus.OPEN:
        raise APIError("CONVERSATION_NOT_OPEN",
                       f"The conversation is {conversation.status}; reopen it to reply.",
                       details={"status": conversation.status})
    channel = channel or conversation.reply_channel or conversation.channel
    to = contact_address(conversation, channel)
    if not to:
        raise validation_error("channel", f"The contact has no address for {channel}.")
    last = _last_inbound(conversation, channel)
    window = ServiceWindow(channel, last.created_at if last is not None else None)
    if window.templates_only and not template_name:
        raise APIError(
            "OUTSIDE_CUSTOMER_SERVICE_WINDOW",
            "The contact has not written on this chat app in the last 24 hours; only "
            "an approved template can be sent.",
            details={"channel": channel,
                     "last_inbound_at": last.created_at.isoformat() if last else None})
    message = message_send(
        organization=conversation.organization, channel=channel, to=to,
        from_=last.to if last is not None and last.to else None, body=body,
        subject=subject, media_url=media_url, template_name=template_name,
        language=language, variables=variables, contact_id=conversation.contact_id,
        conversation_id=conversation.pk, principal=principal)
    conversation.last_message_at = message.created_at
    conversation.last_message_preview = (message.body or "")[:140]
    conversation.last_message_direction = "outbound"
    conversation.unread_count = 0
    _save(conversation, "last_message_at", "last_message_preview", "last_message_direction",
          "unread_count")
    record(conversation, "replied", principal=principal, event="conversation.updated",
           data={"message_id": message.pk, "channel": channel})
    return message


# --- Side conversations ----------------------------------------------------------------


@transaction.atomic
def side_create(*, principal: Principal, conversation_id: str, subject: str,
                external_participants: list[dict], body: str | None = None
                ) -> tuple[SideConversation, SideMessage | None]:
    conversation = locked(principal, conversation_id)
    side = SideConversation.objects.for_organization(principal.organization).create(
        organization=principal.organization, conversation=conversation, subject=subject,
        external_participants=external_participants, created_by=principal.actor_id)
    record(conversation, "side_conversation_created", principal=principal,
           event="conversation.updated", data={"side_conversation_id": side.pk})
    message = _side_send(principal, side, body) if body else None
    return side, message


def _side_send(principal: Principal, side: SideConversation, body: str) -> SideMessage:
    from messaging.sending.accept import message_send

    organization = principal.organization
    ids: list[str] = []
    for person in side.external_participants:
        if person.get("email"):
            sent = message_send(organization=organization, channel="email", to=person["email"],
                                subject=side.subject or "Conversation", body=body,
                                principal=principal)
        elif person.get("phone"):
            sent = message_send(organization=organization, channel="sms", to=person["phone"],
                                body=body, principal=principal)
        else:
            continue
        ids.append(sent.pk)
    if not ids:
        raise validation_error("external_participants",
                               "No participant has an email or phone to write to.")
    message = SideMessage.objects.for_organization(organization).create(
        organization=organization, side_conversation=side, body=body,
        sent_by=principal.actor_id, message_ids=ids)
    side.message_count += 1
    side.save(update_fields=["message_count", "updated_at"])
    return message


def _side_locked(principal: Principal, conversation_id: str, side_id: str) -> SideConversation:
    side = (SideConversation.objects.for_organization(principal.organization)
            .select_for_update(of=("self",)).select_related("conversation")
            .filter(pk=side_id, conversation_id=conversation_id).first())
    if side is None:
        raise APIError("NOT_FOUND")
    return side


@transaction.atomic
def side_reply(*, principal: Principal, conversation_id: str, side_id: str,
               body: str) -> SideMessage:
    side = _side_locked(principal, conversation_id, side_id)
    if side.status != "open":
        raise APIError("CONFLICT", "The side conversation is resolved; reopen it first.",
                       details={"status": side.status})
    message = _side_send(principal, side, body)
    record(side.conversation, "side_conversation_replied", principal=principal,
           event="conversation.updated",
           data={"side_conversation_id": side.pk, "side_message_id": message.pk})
    return message


@transaction.atomic
def side_set_status(*, principal: Principal, conversation_id: str, side_id: str,
                    status: str) -> SideConversation:
    side = _side_locked(principal, conversation_id, side_id)
    if side.status == status:
        raise APIError("CONFLICT", f"The side conversation is already {status}.",
                       details={"status": side.status})
    side.status = status
    side.resolved_at = timezone.now() if status == "resolved" else None
    side.save(update_fields=["status", "resolved_at", "updated_at"])
    record(side.conversation, f"side_conversation_{'resolved' if status == 'resolved' else 'reopened'}",
           principal=principal, event="conversation.updated",
           data={"side_conversation_id": side.pk})
    return side
