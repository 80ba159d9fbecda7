"""Serializers of the messages and messaging-services endpoints.

Input serializers check types only; the rules (required fields, E.164, senders, opt-outs,
send_at range...) live in `messaging.validation` / `messaging.services`, so every caller
of `message_send` gets the same answers.
"""

from __future__ import annotations

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from messaging.models import Channel, Message, MessagingService
from messaging.validation import CHANNELS


@extend_schema_field({"oneOf": [{"type": "string", "format": "uri"},
                                {"type": "array", "items": {"type": "string", "format": "uri"},
                                 "maxItems": 10}],
                      "description": "A media URL or a list of them (at most 10); a `fil_` id "
                                     "of an uploaded file is replaced by its signed URL."})
class MediaURLField(serializers.JSONField):
    pass


@extend_schema_field({"oneOf": [{"type": "array", "items": {"type": "string",
                                                             "enum": list(CHANNELS)}},
                                {"type": "string", "enum": list(CHANNELS)}],
                      "description": "Channels tried in order when the primary fails or has no "
                                     "delivery receipt within fallback_after_seconds."})
class FallbackField(serializers.JSONField):
    pass


@extend_schema_field({"type": "object", "additionalProperties": {"type": "string"},
                      "description": 'Template placeholders keyed "1", "2"...'})
class VariablesField(serializers.JSONField):
    pass


class MessageSendSerializer(serializers.Serializer):
    """Body of `POST /api/v1/messages` (and `/messages/sms`, `/whatsapp`, `/rcs`)."""

    channel = serializers.ChoiceField(choices=Channel.choices, required=False,
                                      help_text="Required on POST /messages; implied by the "
                                                "channel-specific routes.")
    to = serializers.CharField(required=False, allow_blank=True, max_length=320,
                               help_text="E.164 (or a national number of the organization's "
                                         "default_country); an email address for email.")
    locals()["from"] = serializers.CharField(
        required=False, allow_blank=True, allow_null=True, max_length=320,
        help_text="The sender; default: the messaging service's sticky sender, the provider "
                  "account's default sender, or the sandbox sender in test mode.")
    body = serializers.CharField(required=False, allow_blank=True, allow_null=True,
                                 trim_whitespace=False, max_length=200_000)
    subject = serializers.CharField(required=False, allow_blank=True, allow_null=True,
                                    max_length=998, help_text="Email only.")
    media_url = MediaURLField(required=False, allow_null=True)
    template_name = serializers.CharField(required=False, allow_null=True, max_length=255)
    content_template_id = serializers.CharField(
        required=False, allow_null=True, max_length=40,
        help_text="A content template (`ctt_`): its variant for the channel, or the first "
                  "one its fallback chain resolves, becomes the body.")
    language = serializers.CharField(required=False, allow_null=True, max_length=35)
    variables = VariablesField(required=False, allow_null=True)
    messaging_service_id = serializers.CharField(required=False, allow_null=True, max_length=40)
    status_callback = serializers.CharField(required=False, allow_null=True, allow_blank=True,
                                            max_length=2048,
                                            help_text="Receives every status transition of "
                                                      "this message, signed like a webhook.")
    webhook_url = serializers.CharField(required=False, allow_null=True, allow_blank=True,
                                        max_length=2048, help_text="Alias of status_callback.")
    send_at = serializers.CharField(required=False, allow_null=True, allow_blank=True,
                                    help_text="ISO 8601, 1 minute to 35 days ahead: the message "
                                              "is `scheduled` until then.")
    fallback = FallbackField(required=False, allow_null=True)
    fallback_after_seconds = serializers.IntegerField(required=False, allow_null=True,
                                                      help_text="Default 60 (5 to 86400).")
    shorten_links = serializers.BooleanField(required=False, allow_null=True, default=None,
                                             help_text="Rewrite http(s) links to tracked "
                                                       "short links /l/<code>.")
    contact_id = serializers.CharField(required=False, allow_null=True, max_length=40)

    def to_service_kwargs(self) -> dict:
        data = dict(self.validated_data)
        callback = data.pop("status_callback", None) or data.pop("webhook_url", None)
        data.pop("webhook_url", None)
        return {
            **{k: v for k, v in data.items() if k != "from"},
            "from_": data.get("from"),
            "media_url": data.get("media_url"),
            "status_callback": callback,
        }


class MessageSerializer(serializers.ModelSerializer):
    # `from` is a Python keyword: build_field maps it to the model's from_address.
    parent_message_id = serializers.CharField(source="parent_id", allow_null=True,
                                              read_only=True)
    messaging_service_id = serializers.CharField(allow_null=True, read_only=True)
    fallback_outcome = serializers.SerializerMethodField(
        help_text="Once the fallback fired: {reason, child_id} or {reason, skipped}.")
    keyword = serializers.SerializerMethodField(help_text="Inbound: STOP/START/HELP kind.")

    class Meta:
        model = Message
        fields = [
            "id", "channel", "direction", "status", "to", "from", "body", "subject",
            "media_urls", "template_name", "language", "variables", "messaging_service_id",
            "contact_id", "conversation_id", "campaign_id", "status_callback", "shorten_links", "send_at",
            "fallback", "fallback_after_seconds", "parent_message_id", "fallback_outcome",
            "keyword", "provider", "provider_message_id", "error_code", "error_message",
            "created_at", "updated_at", "sent_at", "delivered_at", "failed_at", "canceled_at",
        ]
        read_only_fields = fields

    def build_field(self, field_name, info, model_class, nested_depth):
        if field_name == "from":
            return serializers.CharField, {"source": "from_address", "read_only": True}
        return super().build_field(field_name, info, model_class, nested_depth)

    def get_fallback_outcome(self, obj: Message) -> dict | None:
        return (obj.metadata or {}).get("fallback")

    def get_keyword(self, obj: Message) -> str | None:
        return (obj.metadata or {}).get("keyword")


class SenderSerializer(serializers.Serializer):
    channel = serializers.ChoiceField(choices=Channel.choices)
    locals()["from"] = serializers.CharField(max_length=320)


class MessagingServiceSerializer(serializers.ModelSerializer):
    senders = SenderSerializer(many=True, read_only=True)

    class Meta:
        model = MessagingService
        fields = ["id", "name", "senders", "sticky_sender", "inbound_webhook_url",
                  "status_callback", "opt_out_handling", "shorten_links", "created_at",
                  "updated_at"]
        read_only_fields = fields


class MessagingServiceWriteSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=200)
    senders = serializers.ListField(child=serializers.DictField(), required=False,
                                    max_length=400,
                                    help_text='[{"channel": "sms", "from": "+1555..."}]')
    sticky_sender = serializers.BooleanField(required=False)
    inbound_webhook_url = serializers.CharField(required=False, allow_null=True,
                                                allow_blank=True, max_length=2048)
    status_callback = serializers.CharField(required=False, allow_null=True, allow_blank=True,
                                            max_length=2048)
    opt_out_handling = serializers.BooleanField(required=False)
    shorten_links = serializers.BooleanField(required=False)


class CallbackSecretSerializer(serializers.Serializer):
    secret = serializers.CharField(help_text="`whsec_...`: signs status callbacks and "
                                             "messaging services' inbound webhooks.")
    created_at = serializers.DateTimeField()
    rotated_at = serializers.DateTimeField(allow_null=True)
