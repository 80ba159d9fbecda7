"""Team-chat reads: channel lists with unread counts, history pages, threads."""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Count, F, Q, QuerySet

from platform_core.errors import validation_error
from platform_core.tenancy.models import Membership

from . import conf, presence
from .models import ChannelMember, ChatMessage, TeamChannel


def my_memberships(user_id: str) -> QuerySet[ChannelMember]:
    return ChannelMember.objects.filter(user_id=user_id).select_related("channel")


def channel_unread_counts(user_id: str, channel_ids: list[str]) -> dict[str, int]:
    """Unread messages (others', not deleted, above the read marker) per channel, in one
    query; capped at TEAM_CHAT_UNREAD_CAP."""
    if not channel_ids:
        return {}
    rows = (ChatMessage.objects
            .filter(channel_id__in=channel_ids, deleted_at__isnull=True,
                    channel__members__user_id=user_id,
                    id__gt=F("channel__members__last_read_message_id"))
            .exclude(sender_user_id=user_id)
            .values("channel_id").annotate(n=Count("id")))
    cap = conf.unread_cap()
    return {row["channel_id"]: min(row["n"], cap) for row in rows}


def channel_roots(channel: TeamChannel) -> QuerySet[ChatMessage]:
    """Thread roots, for the history page (newest first through the paginator). A deleted
    root stays while it has replies (it renders `root: null`)."""
    return (ChatMessage.objects
            .filter(channel=channel, parent__isnull=True)
            .filter(Q(deleted_at__isnull=True) | Q(reply_count__gt=0))
            .select_related("sender_user"))


def thread_root(channel: TeamChannel, message_id: str) -> ChatMessage | None:
    msg = (ChatMessage.objects.filter(channel=channel, pk=message_id)
           .select_related("sender_user", "parent__sender_user").first())
    if msg is not None and msg.parent_id is not None:
        msg = msg.parent
    return msg


def thread_replies(root: ChatMessage) -> QuerySet[ChatMessage]:
    return (ChatMessage.objects.filter(parent=root, deleted_at__isnull=True)
            .select_related("sender_user"))


def presence_snapshot(org, raw_ids: str | None) -> list[presence.Entry]:
    members = Membership.objects.for_organization(org).filter(user__is_active=True)
    if raw_ids:
        wanted = [u.strip() for u in raw_ids.split(",") if u.strip()]
        if len(wanted) > 200:
            raise validation_error("user_ids", "At most 200 user ids.", status=400)
        members = members.filter(user_id__in=wanted)
    user_ids = list(members.order_by("user_id").values_list("user_id", flat=True)[:1000])
    return presence.snapshot(org_id=org.pk, user_ids=user_ids) or []


@dataclass(frozen=True)
class Person:
    user_id: str
    name: str  # the name, or the email when the user has none


def people(org, limit: int = 1000) -> list[Person]:
    """The organization's active users by name: whom a member can message or add to a
    channel (the same people presence_snapshot covers)."""
    rows = (Membership.objects.for_organization(org).filter(user__is_active=True)
            .order_by("user__name", "user__email")
            .values_list("user_id", "user__name", "user__email")[:limit])
    return [Person(user_id, name or email) for user_id, name, email in rows]


def channel_members(channel: TeamChannel) -> QuerySet[ChannelMember]:
    return ChannelMember.objects.filter(channel=channel).select_related("user").order_by("id")
