from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from contacts.api.serializers import ContactSerializer
from contacts.segments import services
from contacts.segments.models import Segment
from contacts.segments.selectors import EXPORT_MAX_ROWS
from contacts.segments.suggest import MAX_LIMIT


@extend_schema_field({
    "type": "object",
    "description": 'Filter tree: {"op": "and"|"or", "rules": [{field, operator, value, '
                   "window_days?} | nested tree]}.",
    "example": {"op": "and", "rules": [{"field": "tags", "operator": "eq", "value": "vip"}]},
})
class FilterTreeField(serializers.JSONField):
    """Shape-checked by `contacts.segments.filters.parse_filters` (issues name the path)."""


class SegmentSerializer(serializers.ModelSerializer):
    filters = FilterTreeField(allow_null=True, help_text="Null for a click cohort.")
    source = serializers.JSONField(
        help_text="Click cohorts: link_id, campaign_id, window_days, clicked_since, "
                  "clicked_until. Empty for rule-defined segments.")
    auto_refresh = serializers.BooleanField(
        read_only=True, help_text="False for click cohorts: their membership is fixed.")

    class Meta:
        model = Segment
        fields = ["id", "name", "description", "kind", "filters", "source", "auto_refresh",
                  "member_count", "refreshed_at", "created_at", "updated_at"]


class SegmentCreateSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=255)
    description = serializers.CharField(max_length=1000, required=False, allow_null=True,
                                        allow_blank=True)
    filters = FilterTreeField()


class SegmentUpdateSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=255, required=False)
    description = serializers.CharField(max_length=1000, required=False, allow_null=True,
                                        allow_blank=True)
    filters = FilterTreeField(required=False)


class SegmentMemberSerializer(ContactSerializer):
    added_at = serializers.DateTimeField(help_text="When the contact joined the segment.")

    class Meta(ContactSerializer.Meta):
        fields = [*ContactSerializer.Meta.fields, "added_at"]


class FromClicksSerializer(serializers.Serializer):
    link_id = serializers.CharField(max_length=40, required=False, allow_null=True,
                                    allow_blank=True)
    campaign_id = serializers.CharField(max_length=64, required=False, allow_null=True,
                                        allow_blank=True)
    window_days = serializers.IntegerField(min_value=1, max_value=services.CLICK_WINDOW_MAX,
                                           required=False,
                                           default=services.CLICK_WINDOW_DEFAULT)
    name = serializers.CharField(max_length=255, required=False, allow_null=True,
                                 allow_blank=True)
    description = serializers.CharField(max_length=1000, required=False, allow_null=True,
                                        allow_blank=True)


class AutopilotSerializer(serializers.Serializer):
    description = serializers.CharField(max_length=1000)


class AutopilotResultSerializer(serializers.Serializer):
    filters = FilterTreeField()
    explanation = serializers.CharField()
    matched_count = serializers.IntegerField()


class AutoSuggestSerializer(serializers.Serializer):
    limit = serializers.IntegerField(required=False, default=5, min_value=1,
                                     help_text=f"Default 5, clamped to {MAX_LIMIT}.")


class SuggestionSerializer(serializers.Serializer):
    name = serializers.CharField()
    description = serializers.CharField()
    rationale = serializers.CharField()
    filters = FilterTreeField()
    matched_count = serializers.IntegerField()


class AutoSuggestResultSerializer(serializers.Serializer):
    suggestions = SuggestionSerializer(many=True)
    llm_dropped_count = serializers.IntegerField(
        help_text="Suggestions removed because they matched nothing.")


class ExportSerializer(serializers.Serializer):
    filters = FilterTreeField()
    limit = serializers.IntegerField(required=False, min_value=1, max_value=EXPORT_MAX_ROWS,
                                     help_text=f"A lower cap than {EXPORT_MAX_ROWS:,} rows.")
    filename = serializers.CharField(max_length=200, required=False, allow_blank=True)


@extend_schema_field(OpenApiTypes.BINARY)
class CSVBody(serializers.Field):
    pass
