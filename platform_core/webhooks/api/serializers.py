from __future__ import annotations

import re

from rest_framework import serializers

from platform_core.webhooks import headers as header_rules
from platform_core.webhooks.models import WebhookDelivery, WebhookDeliveryAttempt, WebhookEndpoint

_EVENT_TYPE = re.compile(r"^[a-z][a-z0-9_]*(\.[a-z0-9_]+)+$")
MAX_EVENT_TYPES = 100


class EndpointSerializer(serializers.ModelSerializer):
    headers = serializers.SerializerMethodField(
        help_text="Custom headers sent on every delivery; secret-bearing values read "
                  "`<redacted>`.")
    disabled_reason = serializers.SerializerMethodField()

    class Meta:
        model = WebhookEndpoint
        fields = ["id", "url", "description", "events", "enabled", "headers", "disabled_reason",
                  "disabled_at", "failing_since", "last_success_at", "last_failure_at",
                  "created_at", "updated_at"]

    def get_headers(self, obj: WebhookEndpoint) -> dict[str, str]:
        return obj.redacted_headers

    def get_disabled_reason(self, obj: WebhookEndpoint) -> str | None:
        return obj.disabled_reason or None


class EndpointWithSecretSerializer(EndpointSerializer):
    secret = serializers.CharField(help_text="The signing secret (`whsec_...`). Shown once.")

    class Meta(EndpointSerializer.Meta):
        fields = [*EndpointSerializer.Meta.fields, "secret"]


class EndpointWriteSerializer(serializers.Serializer):
    url = serializers.CharField(max_length=2048)
    events = serializers.ListField(child=serializers.CharField(max_length=100),
                                   allow_empty=False, max_length=MAX_EVENT_TYPES)
    description = serializers.CharField(max_length=500, required=False, allow_blank=True)
    enabled = serializers.BooleanField(required=False)
    headers = serializers.JSONField(required=False)

    def validate_events(self, value: list[str]) -> list[str]:
        value = list(dict.fromkeys(v.strip() for v in value))
        if "*" in value:
            return ["*"]
        bad = [v for v in value if not _EVENT_TYPE.match(v)]
        if bad:
            raise serializers.ValidationError(
                f"Not an event type: {', '.join(bad)}. Use types such as `message.delivered`, "
                "or [\"*\"] for every event.")
        return value

    def validate_headers(self, value) -> dict[str, str]:
        if value is None:
            return {}
        try:
            return header_rules.validate_custom(value)
        except ValueError as exc:
            raise serializers.ValidationError(str(exc)) from None


class AttemptSerializer(serializers.ModelSerializer):
    error = serializers.SerializerMethodField()

    class Meta:
        model = WebhookDeliveryAttempt
        fields = ["number", "attempted_at", "response_status", "error", "duration_ms", "outcome"]

    def get_error(self, obj: WebhookDeliveryAttempt) -> str | None:
        return obj.error or None


class DeliverySerializer(serializers.ModelSerializer):
    last_error = serializers.SerializerMethodField()
    dead_lettered = serializers.SerializerMethodField()
    replay_of = serializers.CharField(source="replay_of_id", allow_null=True, read_only=True)

    class Meta:
        model = WebhookDelivery
        fields = ["id", "endpoint_id", "event_id", "event_type", "status", "attempts",
                  "next_retry_at", "last_attempt_at", "response_status", "request_headers",
                  "response_headers", "last_response_body", "last_error", "duration_ms",
                  "succeeded_at", "failed_at", "dead_lettered", "dead_lettered_at",
                  "replay_of", "created_at", "updated_at"]

    def get_last_error(self, obj: WebhookDelivery) -> str | None:
        return obj.last_error or None

    def get_dead_lettered(self, obj: WebhookDelivery) -> bool:
        return obj.dead_lettered_at is not None


class DeliveryDetailSerializer(DeliverySerializer):
    payload = serializers.JSONField(help_text="The event envelope POSTed on every attempt.")
    attempt_history = serializers.SerializerMethodField()

    class Meta(DeliverySerializer.Meta):
        fields = [*DeliverySerializer.Meta.fields, "payload", "attempt_history"]

    def get_attempt_history(self, obj: WebhookDelivery) -> list[dict]:
        return AttemptSerializer(obj.attempt_log.order_by("number"), many=True).data


class ReplaySerializer(serializers.Serializer):
    replay_event_id = serializers.CharField()
    replay_delivery_id = serializers.CharField()
    original_delivery_id = serializers.CharField()
    status = serializers.CharField()
