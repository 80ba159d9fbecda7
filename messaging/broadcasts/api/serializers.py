"""Serializers of `/api/v1/broadcasts`.

The input serializer checks types only; the rules (channel, content, template, audience,
sender, send_at) are `services.check_config`'s, the same a single send answers.
"""

from __future__ import annotations

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from messaging.api.serializers import MediaURLField
from messaging.broadcasts.models import Broadcast, BroadcastStatus
from messaging.broadcasts.selectors import broadcast_progress
from messaging.models import Channel


@extend_schema_field({"type": "object", "additionalProperties": {"type": "string"},
                      "description": 'Template placeholders keyed "1", "2"...; a value may '
                                     'name contact fields: "{{contact.first_name | there}}" '
                                     "(id, first_name, last_name, full_name, phone, email, "
                                     "custom.<key>; after `|` the value used when the "
                                     "contact has none)."})
class BroadcastVariablesField(serializers.JSONField):
    pass


class BroadcastAudienceSerializer(serializers.Serializer):
    list_id = serializers.CharField(required=False, max_length=40,
                                    help_text="A contact list (`lst_`).")
    segment_id = serializers.CharField(required=False, max_length=40,
                                       help_text="A saved segment (`seg_`): its members.")


@extend_schema_field(BroadcastAudienceSerializer)
class AudienceField(serializers.JSONField):
    pass


class BroadcastCreateSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=200)
    channel = serializers.ChoiceField(choices=Channel.choices)
    template_name = serializers.CharField(required=False, allow_null=True, max_length=255)
    language = serializers.CharField(required=False, allow_null=True, max_length=35)
    variables = BroadcastVariablesField(required=False, allow_null=True)
    body = serializers.CharField(required=False, allow_blank=True, allow_null=True,
                                 trim_whitespace=False, max_length=200_000,
                                 help_text="Instead of a template; may name contact fields "
                                           "like variables do.")
    subject = serializers.CharField(required=False, allow_blank=True, allow_null=True,
                                    max_length=998, help_text="Email only.")
    media_url = MediaURLField(required=False, allow_null=True)
    audience = AudienceField(help_text='{"list_id": "lst_..."} or {"segment_id": "seg_..."}.')
    messaging_service_id = serializers.CharField(required=False, allow_null=True, max_length=40)
    locals()["from"] = serializers.CharField(
        required=False, allow_blank=True, allow_null=True, max_length=320,
        help_text="The sender; default: the messaging service's sticky sender per "
                  "recipient, the provider account's default, or the sandbox sender.")
    send_at = serializers.CharField(required=False, allow_null=True, allow_blank=True,
                                    help_text="ISO 8601, 1 minute to 35 days ahead: the "
                                              "broadcast is `scheduled` until then.")
    shorten_links = serializers.BooleanField(required=False, allow_null=True, default=None,
                                             help_text="Rewrite links to tracked short links "
                                                       "(default: the messaging service's "
                                                       "setting).")
    rate_per_second = serializers.FloatField(
        required=False, allow_null=True,
        help_text="Messages per second per sender address (default: the deployment's "
                  "MESSAGING_SENDER_RATE_PER_SECOND).")

    def to_service_kwargs(self) -> dict:
        data = dict(self.validated_data)
        data["from_"] = data.pop("from", None)
        return data


class BroadcastCountersSerializer(serializers.Serializer):
    total_recipients = serializers.IntegerField(help_text="The audience snapshot's size.")
    queued = serializers.IntegerField(help_text="Recipients whose message was created.")
    sent = serializers.IntegerField(help_text="Messages the provider accepted.")
    delivered = serializers.IntegerField()
    failed = serializers.IntegerField(help_text="failed, undelivered or expired.")
    skipped_opted_out = serializers.IntegerField(help_text="Recipients who opted out (STOP).")
    skipped_invalid = serializers.IntegerField(
        help_text="Recipients the send refused (address, template variables...).")
    canceled = serializers.IntegerField(help_text="Recipients never sent to: the broadcast "
                                                  "was canceled or failed.")
    clicked = serializers.IntegerField(help_text="Recipients who followed a tracked link.")


class BroadcastProgressSerializer(serializers.Serializer):
    processed = serializers.IntegerField()
    pending = serializers.IntegerField()
    percent = serializers.FloatField(help_text="processed over total_recipients, 0-100.")


class BroadcastSerializer(serializers.ModelSerializer):
    status = serializers.ChoiceField(choices=BroadcastStatus.choices, read_only=True)
    audience = serializers.SerializerMethodField()
    messaging_service_id = serializers.CharField(allow_null=True, read_only=True)
    counters = serializers.SerializerMethodField()
    progress = serializers.SerializerMethodField()

    class Meta:
        model = Broadcast
        fields = [
            "id", "name", "status", "channel", "template_name", "language", "variables",
            "body", "subject", "media_urls", "audience", "messaging_service_id", "from",
            "send_at", "shorten_links", "rate_per_second", "counters", "progress",
            "error_code", "error_message", "created_at", "updated_at", "started_at",
            "completed_at", "canceled_at",
        ]
        read_only_fields = fields

    def build_field(self, field_name, info, model_class, nested_depth):
        if field_name == "from":
            return serializers.CharField, {"source": "from_address", "read_only": True}
        return super().build_field(field_name, info, model_class, nested_depth)

    @extend_schema_field(BroadcastAudienceSerializer)
    def get_audience(self, obj: Broadcast) -> dict:
        return {"list_id": obj.list_id} if obj.list_id else {"segment_id": obj.segment_id}

    @extend_schema_field(BroadcastCountersSerializer)
    def get_counters(self, obj: Broadcast) -> dict:
        return {
            "total_recipients": obj.total_recipients, "queued": obj.queued, "sent": obj.sent,
            "delivered": obj.delivered, "failed": obj.failed,
            "skipped_opted_out": obj.skipped_opted_out,
            "skipped_invalid": obj.skipped_invalid, "canceled": obj.canceled,
            "clicked": obj.clicked,
        }

    @extend_schema_field(BroadcastProgressSerializer)
    def get_progress(self, obj: Broadcast) -> dict:
        return broadcast_progress(obj)
