"""Reads of tenant data for the AI endpoints: always scoped to the organization; a message
or conversation of another organization is simply not found (404)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.db.models import Count, Q
from django.utils import timezone

from conversations.models import Conversation
from messaging.models import Direction, Message, MessageStatus
from platform_core.errors import APIError
from platform_core.tenancy.models import Organization

from ..usage.models import AIUsage

TRANSCRIPT_TURNS = 50  # the most recent turns a summary or reply suggestion reads


def message_in(organization: Organization, message_id: str) -> Message:
    message = Message.objects.for_organization(organization).filter(pk=message_id).first()
    if message is None:
        raise APIError("NOT_FOUND", "No message with this id in the organization.")
    return message


def conversation_in(organization: Organization, conversation_id: str) -> Conversation:
    conversation = (Conversation.objects.for_organization(organization)
                    .filter(pk=conversation_id).first())
    if conversation is None:
        raise APIError("NOT_FOUND", "No conversation with this id in the organization.")
    return conversation


def transcript(organization: Organization, conversation: Conversation
               ) -> list[tuple[str, str]]:
    """The conversation's last turns, oldest first, as `(customer|agent, text)`."""
    rows = list(Message.objects.for_organization(organization)
                .filter(conversation_id=conversation.pk)
                .order_by("-created_at", "-id")
                .values_list("direction", "body")[:TRANSCRIPT_TURNS])
    return [("customer" if d == Direction.INBOUND else "agent", body or "")
            for d, body in reversed(rows) if body]


def channel_performance(organization: Organization, *, days: int, contact_id: str = ""
                        ) -> list[dict[str, Any]]:
    """Per channel over the window: outbound volume, delivered and failed, inbound replies."""
    since = timezone.now() - timedelta(days=days)
    rows = Message.objects.for_organization(organization).filter(created_at__gte=since)
    if contact_id:
        rows = rows.filter(contact_id=contact_id)
    outbound = Q(direction=Direction.OUTBOUND)
    stats = rows.values("channel").annotate(
        sent=Count("pk", filter=outbound),
        delivered=Count("pk", filter=outbound & Q(status=MessageStatus.DELIVERED)),
        failed=Count("pk", filter=outbound & Q(status__in=[
            MessageStatus.FAILED, MessageStatus.UNDELIVERED, MessageStatus.EXPIRED])),
        replies=Count("pk", filter=Q(direction=Direction.INBOUND)),
    ).order_by("channel")
    return list(stats)


def dashboard_figures(organization: Organization, *, days: int) -> dict[str, Any]:
    now = timezone.now()
    start, previous = now - timedelta(days=days), now - timedelta(days=2 * days)
    messages = Message.objects.for_organization(organization)
    window = Q(created_at__gte=start)
    before = Q(created_at__gte=previous, created_at__lt=start)
    outbound = Q(direction=Direction.OUTBOUND)
    counts = messages.filter(created_at__gte=previous).aggregate(
        sent=Count("pk", filter=window & outbound),
        sent_before=Count("pk", filter=before & outbound),
        delivered=Count("pk", filter=window & outbound & Q(status=MessageStatus.DELIVERED)),
        failed=Count("pk", filter=window & outbound & Q(status__in=[
            MessageStatus.FAILED, MessageStatus.UNDELIVERED, MessageStatus.EXPIRED])),
        inbound=Count("pk", filter=window & Q(direction=Direction.INBOUND)),
        inbound_before=Count("pk", filter=before & Q(direction=Direction.INBOUND)),
    )
    conversations = Conversation.objects.for_organization(organization).aggregate(
        open=Count("pk", filter=Q(status="open")),
        new=Count("pk", filter=Q(created_at__gte=start)))
    ai = AIUsage.objects.for_organization(organization).filter(created_at__gte=start)
    ai_totals = ai.aggregate(calls=Count("pk"))
    return {**counts, "open_conversations": conversations["open"],
            "new_conversations": conversations["new"], "ai_calls": ai_totals["calls"]}
