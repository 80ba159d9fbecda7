"""Team-chat writes: channels, members, messages, threads, read markers.

Each function takes the acting user's id (actors.py) and runs in one transaction; live
updates are published after commit (live.py).
"""

from __future__ import annotations

from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone

from platform_core.audit.services import audit_record
from platform_core.errors import APIError, validation_error
from platform_core.files.models import StoredFile
from platform_core.identity.principal import Principal
from platform_core.tenancy.models import Membership

from . import live, render
from .models import ChannelMember, ChannelRole, ChatMessage, TeamChannel

MAX_MENTIONS = 50
MAX_ATTACHMENTS = 10
MANAGERS = (ChannelRole.OWNER, ChannelRole.ADMIN)


# --- Membership checks -----------------------------------------------------------------


def membership(channel: TeamChannel, user_id: str) -> ChannelMember:
    """The caller's membership, or 403 NOT_A_MEMBER (every channel route)."""
    member = (ChannelMember.objects.select_related("channel", "user")
              .filter(channel=channel, user_id=user_id).first())
    if member is None:
        raise APIError("NOT_A_MEMBER")
    return member


def channel_membership(channel_id: str, user_id: str) -> ChannelMember:
    """By channel id: 404 NOT_FOUND when the organization has no such channel, else the
    caller's membership (403 NOT_A_MEMBER); the API and the dashboard both look up here."""
    channel = TeamChannel.objects.filter(pk=channel_id).first()
    if channel is None:
        raise APIError("NOT_FOUND")
    return membership(channel, user_id)


def require_manager(member: ChannelMember) -> None:
    if member.role not in MANAGERS:
        raise APIError("CHANNEL_ROLE_REQUIRED")


def _org_user(org, user_id: str, field: str = "user_id") -> str:
    """`user_id` when it names an active member of the organization, else 422."""
    exists = (Membership.objects.for_organization(org)
              .filter(user_id=user_id, user__is_active=True).exists())
    if not exists:
        raise validation_error(field, "No active user of this organization has this id.")
    return user_id


# --- Channels ---------------------------------------------------------------------------


def channel_create(*, principal: Principal, user_id: str, name: str,
                   description: str = "") -> TeamChannel:
    try:
        with transaction.atomic():
            channel = TeamChannel.objects.create(
                organization=principal.organization, name=name, description=description,
                created_by_user_id=user_id)
            ChannelMember.objects.create(organization=principal.organization, channel=channel,
                                         user_id=user_id, role=ChannelRole.OWNER)
            audit_record(action="team_chat.channel.created", principal=principal,
                         target=channel)
            live.control(user_id, "join", channel.pk, {
                "type": "member.added", "channel_id": channel.pk, "user_id": user_id,
                "role": ChannelRole.OWNER})
    except IntegrityError:
        raise APIError("ALREADY_EXISTS", "A channel with this name already exists.") from None
    return channel


def channel_update(*, principal: Principal, member: ChannelMember, changes: dict
                   ) -> TeamChannel:
    require_manager(member)
    channel = member.channel
    for field, value in changes.items():
        setattr(channel, field, value)
    try:
        with transaction.atomic():
            channel.save()
            audit_record(action="team_chat.channel.updated", principal=principal,
                         target=channel, metadata={"fields": sorted(changes)})
            live.publish([live.channel_group(channel.pk)], {
                "type": "channel.updated",
                "channel": render.channel(channel, my_role=None)})
    except IntegrityError:
        raise APIError("ALREADY_EXISTS", "A channel with this name already exists.") from None
    return channel


def channel_delete(*, principal: Principal, member: ChannelMember) -> None:
    if member.role != ChannelRole.OWNER:
        raise APIError("CHANNEL_ROLE_REQUIRED", "Only an owner of the channel may delete it.")
    channel = member.channel
    with transaction.atomic():
        user_ids = list(ChannelMember.objects.filter(channel=channel)
                        .values_list("user_id", flat=True))
        for uid in user_ids:
            live.control(uid, "leave", channel.pk,
                         {"type": "channel.deleted", "channel_id": channel.pk})
        audit_record(action="team_chat.channel.deleted", principal=principal, target=channel)
        channel.delete()


def member_add(*, principal: Principal, member: ChannelMember, user_id: str,
               role: str = ChannelRole.MEMBER) -> ChannelMember:
    require_manager(member)
    if role == ChannelRole.OWNER and member.role != ChannelRole.OWNER:
        raise APIError("CHANNEL_ROLE_REQUIRED", "Only an owner may add another owner.")
    _org_user(principal.organization, user_id)
    channel = member.channel
    try:
        with transaction.atomic():
            added = ChannelMember.objects.create(organization=principal.organization,
                                                 channel=channel, user_id=user_id, role=role)
            audit_record(action="team_chat.member.added", principal=principal, target=channel,
                         metadata={"user_id": user_id, "role": role})
            event = {"type": "member.added", "channel_id": channel.pk, "user_id": user_id,
                     "role": role}
            live.publish([live.channel_group(channel.pk)], event)
            live.control(user_id, "join", channel.pk, event)
    except IntegrityError:
        raise APIError("ALREADY_EXISTS", "This user is already a member.") from None
    return added


def member_remove(*, principal: Principal, member: ChannelMember, user_id: str) -> None:
    """Managers remove anyone but the last owner; anyone may leave (remove themselves)."""
    if user_id != member.user_id:
        require_manager(member)
    channel = member.channel
    with transaction.atomic():
        target = (ChannelMember.objects.select_for_update()
                  .filter(channel=channel, user_id=user_id).first())
        if target is None:
            raise APIError("NOT_FOUND", "This user is not a member of the channel.")
        if target.role == ChannelRole.OWNER:
            if member.role != ChannelRole.OWNER:
                raise APIError("CHANNEL_ROLE_REQUIRED", "Only an owner may remove an owner.")
            owners = ChannelMember.objects.filter(channel=channel, role=ChannelRole.OWNER)
            if owners.count() == 1:
                raise APIError("CONFLICT", "The last owner cannot leave; delete the channel "
                                           "or make another member owner first.")
        target.delete()
        audit_record(action="team_chat.member.removed", principal=principal, target=channel,
                     metadata={"user_id": user_id})
        event = {"type": "member.removed", "channel_id": channel.pk, "user_id": user_id}
        live.control(user_id, "leave", channel.pk, event)
        live.publish([live.channel_group(channel.pk)], event)


# --- Messages ---------------------------------------------------------------------------


def check_mentions(mentions: list[str], allowed: set[str]) -> list[str]:
    unique = list(dict.fromkeys(mentions))
    if len(unique) > MAX_MENTIONS:
        raise validation_error("mentions", f"At most {MAX_MENTIONS} mentions.")
    strangers = [m for m in unique if m not in allowed]
    if strangers:
        raise validation_error("mentions", "Mentions must be user ids of members: "
                                           + ", ".join(strangers[:5]))
    return unique


def check_attachments(attachments: list[str]) -> list[str]:
    unique = list(dict.fromkeys(attachments))
    if len(unique) > MAX_ATTACHMENTS:
        raise validation_error("attachments", f"At most {MAX_ATTACHMENTS} attachments.")
    if unique:
        found = set(StoredFile.objects.filter(pk__in=unique).values_list("pk", flat=True))
        missing = [a for a in unique if a not in found]
        if missing:
            raise validation_error("attachments", "Unknown file ids: "
                                                  + ", ".join(missing[:5]))
    return unique


def _channel_member_ids(channel: TeamChannel) -> set[str]:
    return set(ChannelMember.objects.filter(channel=channel).values_list("user_id", flat=True))


def _root_of(channel: TeamChannel, message_id: str) -> ChatMessage:
    """The live root a reply belongs to (a reply's id resolves to its root)."""
    msg = (ChatMessage.objects.filter(channel=channel, pk=message_id)
           .select_related("parent").first())
    if msg is not None and msg.parent_id is not None:
        msg = msg.parent
    if msg is None or msg.is_deleted:
        raise APIError("NOT_FOUND", "No such message in this channel.")
    return msg


def message_post(*, member: ChannelMember, body: str, mentions: list[str],
                 attachments: list[str], parent_message_id: str | None = None
                 ) -> ChatMessage:
    """A root message, or a thread reply when `parent_message_id` is given (one level:
    the reply is attached to the thread root whichever message of the thread is named)."""
    channel = member.channel
    mentions = check_mentions(mentions, _channel_member_ids(channel) if mentions else set())
    attachments = check_attachments(attachments)
    with transaction.atomic():
        root = None
        if parent_message_id:
            root = _root_of(channel, parent_message_id)
            root = ChatMessage.objects.select_for_update().get(pk=root.pk)
        msg = ChatMessage.objects.create(
            organization_id=channel.organization_id, channel=channel,
            sender_user_id=member.user_id, body=body, mentions=mentions,
            attachments=attachments, parent=root)
        msg.sender_user = member.user
        if root is not None:
            ChatMessage.objects.filter(pk=root.pk).update(
                reply_count=F("reply_count") + 1, last_reply_at=msg.created_at)
            root.reply_count += 1
            root.last_reply_at = msg.created_at
        # The sender has read what they wrote.
        ChannelMember.objects.filter(pk=member.pk).update(last_read_message_id=msg.pk)
        data = render.message(msg)
        event = {"type": "message.created", "channel_id": channel.pk, "message": data}
        if root is not None:
            event = {"type": "thread.reply", "channel_id": channel.pk, "message": data,
                     "root_id": root.pk, "reply_count": root.reply_count,
                     "last_reply_at": data["created_at"]}
        live.publish([live.channel_group(channel.pk)], event)
    return msg


def _own_message(channel: TeamChannel, message_id: str, user_id: str) -> ChatMessage:
    msg = (ChatMessage.objects.select_for_update()
           .filter(channel=channel, pk=message_id, deleted_at__isnull=True).first())
    if msg is None or msg.sender_user_id != user_id:
        # Someone else's message answers exactly like a missing one.
        raise APIError("NOT_FOUND")
    return msg


def message_edit(*, member: ChannelMember, message_id: str, body: str,
                 mentions: list[str] | None = None) -> ChatMessage:
    channel = member.channel
    if mentions is not None:
        mentions = check_mentions(mentions, _channel_member_ids(channel) if mentions else set())
    with transaction.atomic():
        msg = _own_message(channel, message_id, member.user_id)
        msg.body = body
        msg.edited_at = timezone.now()
        fields = ["body", "edited_at"]
        if mentions is not None:
            msg.mentions = mentions
            fields.append("mentions")
        msg.save(update_fields=fields)
        msg.sender_user = member.user
        live.publish([live.channel_group(channel.pk)], {
            "type": "message.updated", "channel_id": channel.pk,
            "message": render.message(msg)})
    return msg


def message_delete(*, member: ChannelMember, message_id: str) -> None:
    """Soft delete by the author, or by an owner/admin of the channel (moderation)."""
    channel = member.channel
    with transaction.atomic():
        msg = (ChatMessage.objects.select_for_update()
               .filter(channel=channel, pk=message_id, deleted_at__isnull=True).first())
        if msg is None or (msg.sender_user_id != member.user_id
                           and member.role not in MANAGERS):
            raise APIError("NOT_FOUND")
        msg.deleted_at = timezone.now()
        msg.save(update_fields=["deleted_at"])
        if msg.parent_id:
            ChatMessage.objects.filter(pk=msg.parent_id, reply_count__gt=0).update(
                reply_count=F("reply_count") - 1)
        live.publish([live.channel_group(channel.pk)], {
            "type": "message.deleted", "channel_id": channel.pk, "message_id": msg.pk,
            "parent_message_id": msg.parent_id})


def read_marker_advance(*, member: ChannelMember, message_id: str | None) -> str:
    """Move the read marker forward (never back) to `message_id`, or to the newest message."""
    channel = member.channel
    if message_id:
        if not ChatMessage.objects.filter(channel=channel, pk=message_id).exists():
            raise validation_error("message_id", "No such message in this channel.")
        target = message_id
    else:
        target = (ChatMessage.objects.filter(channel=channel).order_by("-id")
                  .values_list("pk", flat=True).first()) or ""
    ChannelMember.objects.filter(pk=member.pk, last_read_message_id__lt=target).update(
        last_read_message_id=target)
    return max(target, member.last_read_message_id)
