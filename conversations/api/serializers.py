from __future__ import annotations

from rest_framework import serializers

from conversations.models import CHANNELS, Conversation


class ConversationSerializer(serializers.ModelSerializer):
    class Meta:
        model = Conversation
        fields = ["id", "contact_id", "channel", "status", "last_message_at", "created_at",
                  "updated_at"]
        read_only_fields = fields


class ConversationCreateSerializer(serializers.Serializer):
    contact_id = serializers.CharField(max_length=40)
    channel = serializers.ChoiceField(choices=CHANNELS)
