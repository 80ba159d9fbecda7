from __future__ import annotations

from rest_framework import serializers

INBOUND_CHANNELS = ("sms", "mms", "whatsapp", "rcs", "email")


class SandboxInboundSerializer(serializers.Serializer):
    channel = serializers.ChoiceField(choices=INBOUND_CHANNELS)
    # `from` is a Python keyword: declared below through `fields`.
    to = serializers.CharField(max_length=320,
                               help_text="The organization's address that receives it.")
    body = serializers.CharField(max_length=10_000, allow_blank=True, trim_whitespace=False)
    media_urls = serializers.ListField(child=serializers.URLField(max_length=2048),
                                       required=False, max_length=10)

    def get_fields(self):
        fields = super().get_fields()
        fields["from"] = serializers.CharField(
            max_length=320, help_text="The end user's address (E.164 or email).")
        return fields


class WebhookAckSerializer(serializers.Serializer):
    received = serializers.IntegerField(help_text="Inbound messages created.")
    duplicates = serializers.IntegerField(help_text="Messages received before (retries).")
    receipts_applied = serializers.IntegerField()
    receipts_ignored = serializers.IntegerField(
        help_text="Out of order, or about a message this platform did not send.")
    template_updates = serializers.IntegerField(
        required=False, help_text="WhatsApp only: template decisions applied.")
    dropped = serializers.IntegerField(
        required=False, help_text="Messages dropped (a blocked sender); absent when none.")
    calls_updates = serializers.IntegerField(
        required=False, help_text="WhatsApp only: call events applied (field `calls`).")
