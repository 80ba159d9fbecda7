"""Team-chat request shapes (validated) and answer shapes (documented; render.py builds
them on the hot paths)."""

from __future__ import annotations

from rest_framework import serializers

from ..models import ChannelRole

BODY_MAX = 4000


def _ids(max_length: int) -> serializers.ListField:
    return serializers.ListField(child=serializers.CharField(max_length=40), required=False,
                                 default=list, max_length=max_length)


# --- Requests ----------------------------------------------------------------------------


class TeamChatChannelCreateSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=80)
    description = serializers.CharField(max_length=500, required=False, allow_blank=True,
                                        default="")


class TeamChatChannelUpdateSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=80, required=False)
    description = serializers.CharField(max_length=500, required=False, allow_blank=True)


class TeamChatMemberAddSerializer(serializers.Serializer):
    user_id = serializers.CharField(max_length=40)
    role = serializers.ChoiceField(choices=ChannelRole.choices, required=False,
                                   default=ChannelRole.MEMBER)


class TeamChatMessageCreateSerializer(serializers.Serializer):
    body = serializers.CharField(max_length=BODY_MAX)
    mentions = _ids(50)
    attachments = _ids(10)
    parent_message_id = serializers.CharField(max_length=40, required=False, allow_null=True)


class TeamChatReplySerializer(serializers.Serializer):
    body = serializers.CharField(max_length=BODY_MAX)
    mentions = _ids(50)
    attachments = _ids(10)


class TeamChatMessageEditSerializer(serializers.Serializer):
    body = serializers.CharField(max_length=BODY_MAX)
    mentions = serializers.ListField(child=serializers.CharField(max_length=40),
                                     required=False, max_length=50)


class TeamChatReadSerializer(serializers.Serializer):
    message_id = serializers.CharField(max_length=40, required=False, allow_null=True)


class TeamChatDMSendSerializer(serializers.Serializer):
    user_id = serializers.CharField(max_length=40)
    body = serializers.CharField(max_length=BODY_MAX)
    mentions = _ids(50)
    attachments = _ids(10)


class TeamChatHeartbeatSerializer(serializers.Serializer):
    status = serializers.ChoiceField(choices=[("online", "online"), ("away", "away")])


class TeamChatHuddleLeaveSerializer(serializers.Serializer):
    huddle_id = serializers.CharField(max_length=40, required=False, allow_null=True)


# --- Answers (documentation) --------------------------------------------------------------


class TeamChatChannelOutSerializer(serializers.Serializer):
    id = serializers.CharField(help_text="tch_ id")
    name = serializers.CharField()
    description = serializers.CharField()
    created_by_user_id = serializers.CharField(allow_null=True)
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()
    my_role = serializers.ChoiceField(choices=ChannelRole.choices, allow_null=True)
    unread_count = serializers.IntegerField(required=False,
                                            help_text="Capped at 99 (99 or more).")


class TeamChatMemberOutSerializer(serializers.Serializer):
    user_id = serializers.CharField()
    role = serializers.ChoiceField(choices=ChannelRole.choices)
    name = serializers.CharField(allow_null=True)
    joined_at = serializers.DateTimeField()


class TeamChatMessageOutSerializer(serializers.Serializer):
    id = serializers.CharField()
    channel_id = serializers.CharField(allow_null=True)
    thread_id = serializers.CharField(allow_null=True, help_text="DM thread (dmt_) or null.")
    sender_user_id = serializers.CharField(allow_null=True)
    body = serializers.CharField()
    mentions = serializers.ListField(child=serializers.CharField())
    attachments = serializers.ListField(child=serializers.CharField())
    created_at = serializers.DateTimeField()
    edited_at = serializers.DateTimeField(allow_null=True)
    parent_message_id = serializers.CharField(allow_null=True)
    reply_count = serializers.IntegerField()
    last_reply_at = serializers.DateTimeField(allow_null=True)
    sender_name = serializers.CharField(allow_null=True)
    sender_avatar_url = serializers.CharField(allow_null=True)


class TeamChatRootEntrySerializer(serializers.Serializer):
    id = serializers.CharField()
    created_at = serializers.DateTimeField()
    root = TeamChatMessageOutSerializer(allow_null=True, help_text="null once the root was deleted")
    reply_count = serializers.IntegerField()
    last_reply_at = serializers.DateTimeField(allow_null=True)


class TeamChatThreadOutSerializer(serializers.Serializer):
    root = TeamChatMessageOutSerializer(allow_null=True)
    replies = TeamChatMessageOutSerializer(many=True)


class TeamChatReadOutSerializer(serializers.Serializer):
    last_read_message_id = serializers.CharField(allow_blank=True)
    unread_count = serializers.IntegerField()


class TeamChatDMSummarySerializer(serializers.Serializer):
    id = serializers.CharField(help_text="The thread id (as thread_id).")
    thread_id = serializers.CharField()
    participant_ids = serializers.ListField(child=serializers.CharField())
    other_user_id = serializers.CharField()
    last_message_id = serializers.CharField(allow_null=True)
    last_message_at = serializers.DateTimeField(allow_null=True)
    last_message_preview = serializers.CharField(help_text="At most 140 characters.")
    unread_count = serializers.IntegerField(help_text="Capped at 99.")
    created_at = serializers.DateTimeField()


class TeamChatSearchHitSerializer(serializers.Serializer):
    message = TeamChatMessageOutSerializer()
    snippet = serializers.CharField(help_text="Matches wrapped in <mark>…</mark>.")
    rank = serializers.FloatField()


class TeamChatPresenceSerializer(serializers.Serializer):
    user_id = serializers.CharField()
    status = serializers.ChoiceField(choices=["online", "away", "offline"])
    online = serializers.BooleanField()
    last_seen_at = serializers.DateTimeField(allow_null=True)
    degraded = serializers.BooleanField(required=False)


class TeamChatHuddleOutSerializer(serializers.Serializer):
    started = serializers.BooleanField()
    token = serializers.CharField(help_text="Media-server access token (LiveKit format).")
    media_url = serializers.CharField()
    huddle_id = serializers.CharField()
    room = serializers.CharField()


class TeamChatHuddleLeaveOutSerializer(serializers.Serializer):
    huddle_id = serializers.CharField()
    channel_id = serializers.CharField()
    ended = serializers.BooleanField()
