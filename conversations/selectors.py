"""Reads of conversations: the list filters."""

from __future__ import annotations

from django.db.models import QuerySet

from platform_core.errors import validation_error

from .models import CHANNELS, ConversationStatus


def conversations_filtered(queryset: QuerySet, params) -> QuerySet:
    """`status`, `channel` and `contact_id` filters of `GET /api/v1/conversations`."""
    status = params.get("status")
    if status:
        if status not in ConversationStatus.values:
            raise validation_error(
                "status", f"status must be one of {', '.join(ConversationStatus.values)}.",
                status=400)
        queryset = queryset.filter(status=status)
    channel = params.get("channel")
    if channel:
        if channel not in CHANNELS:
            raise validation_error("channel", f"channel must be one of {', '.join(CHANNELS)}.",
                                   status=400)
        queryset = queryset.filter(channel=channel)
    contact_id = params.get("contact_id")
    if contact_id:
        queryset = queryset.filter(contact_id=contact_id)
    return queryset
