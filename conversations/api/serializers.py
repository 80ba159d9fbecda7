from __future__ import annotations

import re

from rest_framework import serializers

from conversations.models import CHANNELS, Conversation, HandoffReason, Priority
from conversations.routing_models import Availability, RoutingAgent

E164 = re.compile(r"^\+[1-9]\d{6,14}$")


def _tag() -> serializers.CharField:
    return serializers.CharField(max_length=64, allow_blank=False)


class ContactSummarySerializer(serializers.Serializer):
    id = serializers.CharField()
    name = serializers.CharField(allow_null=True)
    phone = serializers.CharField(allow_null=True)
    email = serializers.CharField(allow_null=True)


class ConversationSerializer(serializers.ModelSerializer):
    contact = serializers.SerializerMethodField()
    unread = serializers.SerializerMethodField()
    last_message = serializers.SerializerMethodField()
    queue = serializers.SerializerMethodField()

    class Meta:
        model = Conversation
        fields = ["id", "contact_id", "contact", "channel", "reply_channel", "status",
                  "priority", "tags", "assignee_id", "assignment_status", "offered_at",
                  "offer_expires_at", "accepted_at", "queue", "waiting_since", "unread",
                  "unread_count", "sentiment", "ai_led", "handoff_status", "last_message",
                  "last_message_at", "snoozed_until", "escalated_at", "closed_at",
                  "merged_into_id", "created_at", "updated_at"]
        read_only_fields = fields

    def get_contact(self, obj) -> ContactSummarySerializer(allow_null=True):
        contacts = self.context.get("contacts")
        contact = contacts.get(obj.contact_id) if contacts is not None else None
        if contact is None:
            return None
        name = " ".join(p for p in (contact.first_name, contact.last_name) if p)
        return {"id": contact.pk, "name": name or None, "phone": contact.phone or None,
                "email": contact.email or None}

    def get_unread(self, obj) -> bool:
        return obj.unread_count > 0

    def get_queue(self, obj) -> str | None:
        return obj.queue or None

    def get_last_message(self, obj) -> dict | None:
        if obj.last_message_at is None:
            return None
        return {"preview": obj.last_message_preview,
                "direction": obj.last_message_direction or None,
                "at": serializers.DateTimeField().to_representation(obj.last_message_at)}


class ConversationCreateSerializer(serializers.Serializer):
    contact_id = serializers.CharField(max_length=40)
    channel = serializers.ChoiceField(choices=CHANNELS)


class ThreadMessageSerializer(serializers.Serializer):
    id = serializers.CharField()
    conversation_id = serializers.CharField()
    direction = serializers.CharField()
    channel = serializers.CharField()
    to = serializers.CharField()
    from_ = serializers.CharField(source="from_address")
    body = serializers.CharField()
    subject = serializers.CharField()
    media_urls = serializers.ListField(child=serializers.CharField())
    status = serializers.CharField()
    participant_id = serializers.SerializerMethodField()
    created_at = serializers.DateTimeField()

    def get_fields(self):
        fields = super().get_fields()
        fields["from"] = fields.pop("from_")
        return fields

    def get_participant_id(self, obj) -> str | None:
        if obj.direction == "inbound":
            return obj.contact_id
        return (obj.metadata or {}).get("sent_by")


class ActivitySerializer(serializers.Serializer):
    id = serializers.CharField()
    conversation_id = serializers.CharField()
    kind = serializers.CharField()
    actor_type = serializers.CharField()
    actor_id = serializers.CharField()
    data = serializers.JSONField()
    created_at = serializers.DateTimeField()


class ReplySerializer(serializers.Serializer):
    body = serializers.CharField(required=False, allow_blank=True, max_length=10000)
    channel = serializers.ChoiceField(choices=CHANNELS, required=False)
    subject = serializers.CharField(required=False, max_length=998)
    media_url = serializers.JSONField(required=False)
    template_name = serializers.CharField(required=False, max_length=512)
    language = serializers.CharField(required=False, max_length=16)
    variables = serializers.DictField(required=False)


class AssignSerializer(serializers.Serializer):
    agent_id = serializers.CharField(allow_null=True, max_length=40)


class HandoffSerializer(serializers.Serializer):
    target_queue = serializers.CharField(required=False, allow_null=True, max_length=64)
    reason_category = serializers.ChoiceField(choices=HandoffReason.choices,
                                              default=HandoffReason.MANUAL)


class SnoozeSerializer(serializers.Serializer):
    until = serializers.DateTimeField()


class EscalateSerializer(serializers.Serializer):
    reason = serializers.CharField(required=False, allow_blank=True, max_length=500,
                                   default="")
    priority = serializers.ChoiceField(choices=Priority.choices, required=False)


class MergeSerializer(serializers.Serializer):
    source_conversation_id = serializers.CharField(max_length=40)
    confirm_weak_identity = serializers.BooleanField(default=False)


class ChannelSerializer(serializers.Serializer):
    channel = serializers.ChoiceField(choices=CHANNELS)


class TagsSerializer(serializers.Serializer):
    tags = serializers.ListField(child=_tag(), max_length=50)


class PrioritySerializer(serializers.Serializer):
    priority = serializers.ChoiceField(choices=Priority.choices)


class ConversationBulkSerializer(serializers.Serializer):
    action = serializers.ChoiceField(choices=["close", "reopen", "assign", "add_tags",
                                              "remove_tags"])
    conversation_ids = serializers.ListField(child=serializers.CharField(max_length=40),
                                             min_length=1, max_length=200)
    agent_id = serializers.CharField(required=False, allow_null=True, max_length=40)
    tags = serializers.ListField(child=_tag(), required=False, max_length=50)

    def validate(self, attrs):
        if attrs["action"] == "assign" and "agent_id" not in attrs:
            raise serializers.ValidationError({"agent_id": "assign needs agent_id."})
        if attrs["action"] in ("add_tags", "remove_tags") and not attrs.get("tags"):
            raise serializers.ValidationError({"tags": "Tag actions need tags."})
        return attrs


class ParticipantSerializer(serializers.Serializer):
    label = serializers.CharField(max_length=200)
    email = serializers.EmailField(required=False)
    phone = serializers.CharField(required=False, max_length=16)
    role = serializers.CharField(required=False, max_length=64)

    def validate_phone(self, value: str) -> str:
        if not E164.match(value):
            raise serializers.ValidationError("phone must be E.164 (+ and 7-15 digits).")
        return value


class SideCreateSerializer(serializers.Serializer):
    subject = serializers.CharField(required=False, allow_blank=True, max_length=200,
                                    default="")
    external_participants = ParticipantSerializer(many=True, min_length=1, max_length=20)
    body = serializers.CharField(required=False, max_length=10000)


class SideReplySerializer(serializers.Serializer):
    body = serializers.CharField(max_length=10000)


class SideMessageSerializer(serializers.Serializer):
    id = serializers.CharField()
    side_conversation_id = serializers.CharField()
    body = serializers.CharField()
    sent_by = serializers.CharField()
    message_ids = serializers.ListField(child=serializers.CharField())
    created_at = serializers.DateTimeField()


class SideConversationSerializer(serializers.Serializer):
    id = serializers.CharField()
    conversation_id = serializers.CharField()
    subject = serializers.CharField()
    external_participants = serializers.JSONField()
    status = serializers.CharField()
    created_by = serializers.CharField()
    message_count = serializers.IntegerField()
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()
    resolved_at = serializers.DateTimeField(allow_null=True)


class RoutingAgentSerializer(serializers.ModelSerializer):
    # The resource is keyed by the member: `id` and `agent_id` are the user id (`usr_`).
    id = serializers.CharField(source="user_id")
    agent_id = serializers.CharField(source="user_id")

    class Meta:
        model = RoutingAgent
        fields = ["id", "agent_id", "skills", "capacity", "availability", "active_count",
                  "last_assigned_at", "created_at", "updated_at"]
        read_only_fields = fields


class RoutingAgentWriteSerializer(serializers.Serializer):
    skills = serializers.ListField(child=serializers.CharField(max_length=64), required=False,
                                   max_length=50)
    capacity = serializers.IntegerField(min_value=0, max_value=1000, required=False)
    availability = serializers.ChoiceField(choices=Availability.choices, required=False)


class CobrowseJoinSerializer(serializers.Serializer):
    control = serializers.BooleanField(default=False)


class WidgetCobrowseSerializer(serializers.Serializer):
    conversation_id = serializers.CharField(max_length=40)
    visitor_id = serializers.CharField(required=False, allow_null=True, max_length=200)
    control = serializers.BooleanField(default=False)
