"""Team chat records: channels and their members, messages (channel or DM), DM threads,
huddles. Presence and typing are ephemeral and never stored here (see presence.py)."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from platform_core.ids import PublicIdField
from platform_core.tenancy.models import TenantModel, organization_key

# The text search configuration of message bodies; the GIN index and the queries use it.
SEARCH_CONFIG = "english"
# (The GIN index over to_tsvector(body) is migration 0002, on PostgreSQL only.)


class ChannelRole(models.TextChoices):
    OWNER = "owner"
    ADMIN = "admin"
    MEMBER = "member"


class TeamChannel(TenantModel):
    id = PublicIdField(prefix="tch")
    organization = organization_key(db_index=False)
    name = models.CharField(max_length=80)
    description = models.CharField(max_length=500, blank=True, default="")
    created_by_user = models.ForeignKey(settings.AUTH_USER_MODEL, null=True,
                                        on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["organization", "name"],
                                               name="team_chat_channel_name_uniq")]
        indexes = [models.Index(fields=["organization", "id"])]


class ChannelMember(TenantModel):
    """A user's membership of a channel, with their role there and their read marker."""

    organization = organization_key(db_index=False)
    channel = models.ForeignKey(TeamChannel, on_delete=models.CASCADE, related_name="members")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE,
                             related_name="+")
    role = models.CharField(max_length=8, choices=ChannelRole.choices,
                            default=ChannelRole.MEMBER)
    joined_at = models.DateTimeField(auto_now_add=True)
    # Read marker: messages with an id above it are unread (ids are time-ordered ULIDs).
    last_read_message_id = models.CharField(max_length=40, blank=True, default="")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["channel", "user"],
                                               name="team_chat_member_uniq")]
        indexes = [models.Index(fields=["organization", "user", "channel"])]


class DMThread(TenantModel):
    """A direct-message thread between two users (`user_low` < `user_high` by id)."""

    id = PublicIdField(prefix="dmt")
    organization = organization_key(db_index=False)
    user_low = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE,
                                 related_name="+")
    user_high = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE,
                                  related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    last_message_id = models.CharField(max_length=40, blank=True, default="")
    last_message_at = models.DateTimeField(null=True)
    last_preview = models.CharField(max_length=140, blank=True, default="")
    low_last_read_message_id = models.CharField(max_length=40, blank=True, default="")
    high_last_read_message_id = models.CharField(max_length=40, blank=True, default="")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["organization", "user_low", "user_high"],
                                               name="team_chat_dm_pair_uniq")]
        indexes = [
            models.Index(fields=["organization", "user_low", "-last_message_id"]),
            models.Index(fields=["organization", "user_high", "-last_message_id"]),
        ]

    def other_user_id(self, user_id: str) -> str:
        return self.user_high_id if user_id == self.user_low_id else self.user_low_id


class ChatMessage(TenantModel):
    """A message in a channel (root or thread reply) or in a DM thread."""

    id = PublicIdField(prefix="tcm")
    organization = organization_key(db_index=False)
    channel = models.ForeignKey(TeamChannel, null=True, on_delete=models.CASCADE,
                                related_name="+")
    dm_thread = models.ForeignKey(DMThread, null=True, on_delete=models.CASCADE,
                                  related_name="+")
    sender_user = models.ForeignKey(settings.AUTH_USER_MODEL, null=True,
                                    on_delete=models.SET_NULL, related_name="+")
    body = models.TextField()
    mentions = models.JSONField(default=list)
    attachments = models.JSONField(default=list)
    parent = models.ForeignKey("self", null=True, on_delete=models.CASCADE,
                               related_name="+")
    reply_count = models.PositiveIntegerField(default=0)
    last_reply_at = models.DateTimeField(null=True)
    created_at = models.DateTimeField(auto_now_add=True)
    edited_at = models.DateTimeField(null=True)
    deleted_at = models.DateTimeField(null=True)

    class Meta:
        indexes = [
            # Channel history: roots newest first.
            models.Index(fields=["channel", "-id"], condition=Q(parent__isnull=True),
                         name="team_chat_msg_roots"),
            # Thread replies, unread counts (id above the read marker).
            models.Index(fields=["parent", "id"], name="team_chat_msg_replies"),
            models.Index(fields=["channel", "id"], name="team_chat_msg_channel"),
            models.Index(fields=["dm_thread", "-id"], name="team_chat_msg_dm"),
            models.Index(fields=["organization", "id"], name="team_chat_msg_org"),
        ]

    @property
    def is_deleted(self) -> bool:
        return self.deleted_at is not None


class Huddle(TenantModel):
    """A live audio/video room of a channel on the configured media server."""

    id = PublicIdField(prefix="hud")
    organization = organization_key(db_index=False)
    channel = models.ForeignKey(TeamChannel, on_delete=models.CASCADE, related_name="+")
    room = models.CharField(max_length=120)
    started_by_user = models.ForeignKey(settings.AUTH_USER_MODEL, null=True,
                                        on_delete=models.SET_NULL, related_name="+")
    started_at = models.DateTimeField(auto_now_add=True)
    ended_at = models.DateTimeField(null=True)

    class Meta:
        constraints = [models.UniqueConstraint(
            fields=["channel"], condition=Q(ended_at__isnull=True),
            name="team_chat_one_live_huddle")]
        indexes = [models.Index(fields=["organization", "id"])]


class HuddleParticipant(TenantModel):
    organization = organization_key(db_index=False)
    huddle = models.ForeignKey(Huddle, on_delete=models.CASCADE, related_name="participants")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE,
                             related_name="+")
    joined_at = models.DateTimeField(auto_now_add=True)
    left_at = models.DateTimeField(null=True)

    class Meta:
        constraints = [models.UniqueConstraint(
            fields=["huddle", "user"], condition=Q(left_at__isnull=True),
            name="team_chat_huddle_present_uniq")]
        indexes = [models.Index(fields=["organization", "user", "left_at"])]
