from __future__ import annotations

import re
from datetime import timedelta

from django.utils import timezone
from rest_framework import serializers

from platform_core.events import services
from platform_core.events.models import EventSink, TrackedEvent

_HEADER_NAME = re.compile(r"^[!#$%&'*+\-.^_`|~0-9A-Za-z]{1,100}$")


class EventEnvelopeSerializer(serializers.Serializer):
    """The event envelope of Document 1, 2.3 (also the feed record and the SSE `data:`)."""

    id = serializers.CharField()
    type = serializers.CharField()
    created_at = serializers.DateTimeField()
    data = serializers.DictField()


class TrackSerializer(serializers.Serializer):
    event = serializers.CharField(max_length=200)
    contact_email = serializers.CharField(max_length=254, required=False, allow_blank=True,
                                          allow_null=True)
    contact_phone = serializers.CharField(max_length=40, required=False, allow_blank=True,
                                          allow_null=True)
    properties = serializers.JSONField(required=False, allow_null=True)
    occurred_at = serializers.DateTimeField(
        required=False, allow_null=True,
        help_text="When the event happened (ISO 8601); default: now. At most 5 minutes ahead.",
    )

    def validate_event(self, value: str) -> str:
        value = value.strip()
        if not value:
            raise serializers.ValidationError("event must not be blank.")
        if services.is_reserved_event_name(value):
            raise serializers.ValidationError(
                "This event name is recorded by the platform itself and cannot be tracked.")
        return value

    def validate_properties(self, value):
        if value is not None and not isinstance(value, dict):
            raise serializers.ValidationError("properties must be a JSON object.")
        return value or {}

    def validate_occurred_at(self, value):
        if value is not None and value > timezone.now() + timedelta(minutes=5):
            raise serializers.ValidationError("occurred_at cannot be in the future.")
        return value


class TrackedEventSerializer(serializers.ModelSerializer):
    event = serializers.CharField(source="name")
    contact_email = serializers.SerializerMethodField()
    contact_phone = serializers.SerializerMethodField()

    class Meta:
        model = TrackedEvent
        fields = ["id", "event", "contact_email", "contact_phone", "contact_id", "occurred_at",
                  "created_at"]

    def get_contact_email(self, obj) -> str | None:
        return obj.contact_email or None

    def get_contact_phone(self, obj) -> str | None:
        return obj.contact_phone or None


class EventSinkSerializer(serializers.ModelSerializer):
    """The read shape of a sink (Document 1, 2.6): never the credentials themselves."""

    url = serializers.SerializerMethodField()
    credentials_configured = serializers.BooleanField(read_only=True)
    last_delivered_at = serializers.SerializerMethodField()
    last_error = serializers.SerializerMethodField()
    last_error_at = serializers.SerializerMethodField()

    class Meta:
        model = EventSink
        fields = ["kind", "destination", "partition_key_path", "headers", "max_batch_size",
                  "enabled", "url", "credentials_configured", "last_delivered_at",
                  "last_error", "last_error_at", "created_at", "updated_at"]

    def get_url(self, obj) -> str | None:
        return obj.url or None

    # The delivery worker is not active yet (Document 1, 4.7): run status is always null.
    def get_last_delivered_at(self, obj) -> str | None:
        return None

    def get_last_error(self, obj) -> str | None:
        return None

    def get_last_error_at(self, obj) -> str | None:
        return None


class EventSinkUpdateSerializer(serializers.Serializer):
    """PATCH body: every field optional (merge write); `last_*` and unknown fields ignored."""

    destination = serializers.DictField(required=False)
    partition_key_path = serializers.CharField(max_length=500, required=False, allow_blank=True)
    headers = serializers.DictField(child=serializers.CharField(max_length=2000),
                                    required=False)
    max_batch_size = serializers.IntegerField(min_value=1, max_value=1000, required=False)
    enabled = serializers.BooleanField(required=False)
    url = serializers.CharField(max_length=2000, required=False, allow_blank=True,
                                allow_null=True)
    credentials = serializers.CharField(max_length=10_000, required=False, allow_blank=True,
                                        allow_null=True, write_only=True, trim_whitespace=False)

    def validate_headers(self, value: dict) -> dict:
        if len(value) > 50:
            raise serializers.ValidationError("At most 50 headers.")
        for name in value:
            if not _HEADER_NAME.match(name):
                raise serializers.ValidationError(f"`{name}` is not a valid header name.")
        return value

    def validate_destination(self, value: dict) -> dict:
        kind = self.context["kind"]
        if value.get("kind") != kind:
            raise serializers.ValidationError({"kind": [f"destination.kind must be `{kind}`."]})
        return value
