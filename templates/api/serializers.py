"""Shapes of the templates family (Document 2, 2.3 and 4.3)."""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from templates.models import ContentTemplate, MessageTemplate, TemplateChannel

CHANNELS_HELP = f"One of {', '.join(TemplateChannel.values)}."


class TemplateSerializer(serializers.ModelSerializer):
    components = serializers.JSONField(
        help_text="Rich shape (whatsapp, rcs): HEADER, BODY, FOOTER, BUTTONS with positional "
                  "{{n}} placeholders; empty for plain channels.")
    content = serializers.SerializerMethodField(
        help_text="Plain body (sms, mms, email); null for rich templates.")
    subject = serializers.SerializerMethodField(help_text="Email subject; null otherwise.")
    localized_from = serializers.CharField(source="localized_from_id", allow_null=True,
                                           help_text="Variant this one was translated from.")
    # Plain strings in the schema (the enums of other families share these field names).
    channel = serializers.CharField(help_text="whatsapp, rcs, sms, mms or email.")
    status = serializers.CharField(help_text="pending, approved, rejected, paused, disabled.")
    category = serializers.CharField(help_text="utility, marketing or authentication.")

    class Meta:
        model = MessageTemplate
        fields = ["id", "name", "channel", "category", "language", "status", "components",
                  "content", "subject", "placeholder_count", "waba_id", "rejection_reason",
                  "localized_from", "provider_template_id", "submitted_at", "decided_at",
                  "created_at", "updated_at"]
        read_only_fields = fields

    @extend_schema_field(OpenApiTypes.STR)
    def get_content(self, obj) -> str | None:
        return None if obj.is_rich else obj.content

    @extend_schema_field(OpenApiTypes.STR)
    def get_subject(self, obj) -> str | None:
        return obj.subject or None


class TemplateWriteSerializer(serializers.Serializer):
    """The body is checked by the services (component paths in the error issues)."""

    name = serializers.CharField(max_length=512)
    channel = serializers.CharField(help_text=CHANNELS_HELP)
    language = serializers.CharField(max_length=35)
    category = serializers.CharField(required=False, allow_null=True,
                                     help_text="utility (default), marketing, authentication.")
    components = serializers.JSONField(required=False, allow_null=True)
    content = serializers.CharField(required=False, allow_null=True, allow_blank=True,
                                    trim_whitespace=False)
    subject = serializers.CharField(required=False, allow_null=True, allow_blank=True)
    waba_id = serializers.CharField(required=False, allow_null=True, allow_blank=True,
                                    max_length=64)


class TemplateUpdateSerializer(TemplateWriteSerializer):
    name = serializers.CharField(max_length=512, required=False)
    channel = serializers.CharField(required=False, help_text=CHANNELS_HELP)
    language = serializers.CharField(max_length=35, required=False)


class ChannelSummarySerializer(serializers.Serializer):
    total = serializers.IntegerField()
    by_status = serializers.DictField(child=serializers.IntegerField())


class SummarySerializer(serializers.Serializer):
    total = serializers.IntegerField()
    by_status = serializers.DictField(child=serializers.IntegerField())
    by_channel = serializers.DictField(child=ChannelSummarySerializer())


class LocalizeSerializer(serializers.Serializer):
    locales = serializers.JSONField(help_text="Target locale codes, at most 25.")


class LocalizeRowSerializer(serializers.Serializer):
    language = serializers.CharField()
    template_id = serializers.CharField(allow_null=True)
    status = serializers.CharField(allow_null=True)
    result = serializers.CharField(help_text="created, existing or failed.")
    error = serializers.DictField(required=False)


class LocalizeResultSerializer(serializers.Serializer):
    template_id = serializers.CharField()
    name = serializers.CharField()
    channel = serializers.CharField()
    source_language = serializers.CharField()
    localizations = LocalizeRowSerializer(many=True)


class LocalizationRowSerializer(serializers.Serializer):
    language = serializers.CharField()
    template_id = serializers.CharField()
    status = serializers.CharField()
    rejection_reason = serializers.CharField(allow_null=True)
    localized_from = serializers.CharField(allow_null=True)
    decided_at = serializers.DateTimeField(allow_null=True)
    created_at = serializers.DateTimeField()


class LocalizationsSerializer(serializers.Serializer):
    template_id = serializers.CharField()
    name = serializers.CharField()
    channel = serializers.CharField()
    source_language = serializers.CharField()
    total = serializers.IntegerField()
    by_status = serializers.DictField(child=serializers.IntegerField())
    localizations = LocalizationRowSerializer(many=True)


class DecisionSerializer(serializers.Serializer):
    decision = serializers.CharField(help_text="approved or rejected.")
    reason = serializers.CharField(required=False, allow_null=True, allow_blank=True,
                                   max_length=1000)


class CountersSerializer(serializers.Serializer):
    sent = serializers.IntegerField()
    delivered = serializers.IntegerField()
    failed = serializers.IntegerField()
    opened = serializers.IntegerField()
    clicked = serializers.IntegerField()


class RatesSerializer(serializers.Serializer):
    delivery_rate = serializers.FloatField(help_text="delivered / (delivered + failed)")
    open_rate = serializers.FloatField(help_text="opened / delivered")
    click_rate = serializers.FloatField(help_text="clicked / delivered")


class CampaignRowSerializer(serializers.Serializer):
    campaign_id = serializers.CharField()
    name = serializers.CharField(allow_null=True)
    status = serializers.CharField(allow_null=True)
    totals = CountersSerializer()
    rates = RatesSerializer()


class AnalyticsTemplateSerializer(serializers.Serializer):
    id = serializers.CharField()
    name = serializers.CharField()
    channel = serializers.CharField()
    language = serializers.CharField()
    status = serializers.CharField()


class AnalyticsSerializer(serializers.Serializer):
    template = AnalyticsTemplateSerializer()
    totals = CountersSerializer()
    rates = RatesSerializer()
    campaigns = CampaignRowSerializer(many=True)
    degraded = serializers.BooleanField(
        help_text="True when the live scan ran over its time budget and the denormalized "
                  "counters answered (very recent sends may be missing).")


# --- Content templates ------------------------------------------------------------------


class ContentTemplateSerializer(serializers.ModelSerializer):
    variants = serializers.JSONField(help_text="Per-channel variants keyed by channel.")
    fallback = serializers.JSONField(help_text="Channels tried in order when the target "
                                               "channel has no variant.")

    class Meta:
        model = ContentTemplate
        fields = ["id", "name", "description", "variants", "fallback", "created_at",
                  "updated_at"]
        read_only_fields = fields


class ContentTemplateWriteSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=255)
    description = serializers.CharField(max_length=1000, required=False, allow_null=True,
                                        allow_blank=True)
    variants = serializers.JSONField()
    fallback = serializers.JSONField(required=False, allow_null=True)


class ContentTemplateUpdateSerializer(ContentTemplateWriteSerializer):
    name = serializers.CharField(max_length=255, required=False)
    variants = serializers.JSONField(required=False)


class RenderRequestSerializer(serializers.Serializer):
    channel = serializers.CharField(help_text=CHANNELS_HELP)
    variables = serializers.JSONField(required=False, allow_null=True,
                                      help_text="Object keyed \"1\", \"2\", ... .")


class RenderResultSerializer(serializers.Serializer):
    content_template_id = serializers.CharField()
    channel = serializers.CharField()
    resolved_channel = serializers.CharField()
    fallback_used = serializers.BooleanField()
    body = serializers.CharField(allow_blank=True)
    subject = serializers.CharField(allow_null=True)
    html = serializers.CharField(allow_null=True)
    media_urls = serializers.ListField(child=serializers.CharField())
    components = serializers.JSONField()
    rich_card = serializers.JSONField(allow_null=True)
    suggestions = serializers.JSONField()
    template = serializers.JSONField(allow_null=True)
    fallback = serializers.ListField(child=serializers.CharField())


class InboundResultSerializer(serializers.Serializer):
    received = serializers.IntegerField()
    applied = serializers.IntegerField()
