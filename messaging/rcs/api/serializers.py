"""Serializers of the RCS endpoints (Document 2, 2.8 and 4.6): explicit field lists; the
input shapes check types and documented limits, the rules live in the services."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from rest_framework import serializers

from messaging.rcs.models import (
    RcsAgent,
    RcsBrand,
    RcsCatalogProduct,
    RcsTemplate,
    RcsTestDevice,
    UseCase,
)

_E164 = re.compile(r"^\+[1-9]\d{6,14}$")
_COLOR = re.compile(r"^#[0-9A-Fa-f]{6}$")
TEMPLATE_NAME = re.compile(r"^[a-z0-9_]{1,64}$")
MAX_SUGGESTIONS = 11
LABEL_MAX = 25


def _https(value: str) -> str:
    parts = urlsplit(value)
    if parts.scheme != "https" or not parts.hostname:
        raise serializers.ValidationError("Must be an https URL.")
    return value


class HttpsURLField(serializers.URLField):
    def __init__(self, **kwargs) -> None:
        kwargs.setdefault("max_length", 2048)
        super().__init__(**kwargs)
        self.validators.append(_https)


class E164Field(serializers.CharField):
    def __init__(self, **kwargs) -> None:
        kwargs.setdefault("max_length", 16)
        kwargs.setdefault("help_text", "E.164, e.g. +14155550123.")
        super().__init__(**kwargs)

    def to_internal_value(self, data):
        value = super().to_internal_value(data)
        if not _E164.match(value):
            raise serializers.ValidationError("Must be an E.164 phone number (+14155550123).")
        return value


# --- brands --------------------------------------------------------------------------------

class RcsBrandSerializer(serializers.ModelSerializer):
    class Meta:
        model = RcsBrand
        fields = ["id", "name", "website", "contact_name", "contact_email", "status",
                  "rejection_reason", "submitted_at", "verified_at", "created_at", "updated_at"]
        read_only_fields = fields


class RcsBrandInputSerializer(serializers.Serializer):
    name = serializers.CharField(min_length=1, max_length=100)
    website = HttpsURLField(required=False, allow_blank=True)
    contact_name = serializers.CharField(required=False, allow_blank=True, max_length=200)
    contact_email = serializers.EmailField(required=False, allow_blank=True, max_length=254)


class RcsBrandPatchSerializer(RcsBrandInputSerializer):
    name = serializers.CharField(min_length=1, max_length=100, required=False)


# --- agents --------------------------------------------------------------------------------

class RcsAgentSerializer(serializers.ModelSerializer):
    brand_id = serializers.CharField(read_only=True)
    launched = serializers.BooleanField(read_only=True)

    class Meta:
        model = RcsAgent
        fields = ["id", "brand_id", "display_name", "description", "logo_url", "hero_url",
                  "color", "phone", "email", "website", "privacy_url", "terms_url", "use_case",
                  "carriers", "status", "verification_status", "carrier_statuses", "launched",
                  "created_at", "updated_at"]
        read_only_fields = fields


class _RcsAgentFields(serializers.Serializer):
    display_name = serializers.CharField(min_length=1, max_length=100)
    description = serializers.CharField(required=False, allow_blank=True, max_length=100)
    logo_url = HttpsURLField(required=False, allow_blank=True)
    hero_url = HttpsURLField(required=False, allow_blank=True)
    color = serializers.CharField(required=False, allow_blank=True, max_length=7)
    phone = E164Field(required=False, allow_blank=True)
    email = serializers.EmailField(required=False, allow_blank=True, max_length=254)
    website = HttpsURLField(required=False, allow_blank=True)
    privacy_url = HttpsURLField(required=False, allow_blank=True)
    terms_url = HttpsURLField(required=False, allow_blank=True)
    use_case = serializers.ChoiceField(choices=UseCase.choices, required=False)
    carriers = serializers.ListField(child=serializers.CharField(min_length=1, max_length=100),
                                     required=False, max_length=50,
                                     help_text="Carriers to launch on (test mode: any names; "
                                               "default sandbox-carrier-a and -b).")

    def validate_color(self, value: str) -> str:
        if value and not _COLOR.match(value):
            raise serializers.ValidationError("Must be #RRGGBB.")
        return value

    def validate_carriers(self, value: list[str]) -> list[str]:
        return list(dict.fromkeys(value))


class RcsAgentCreateSerializer(_RcsAgentFields):
    brand_id = serializers.CharField(max_length=40)


class RcsAgentProfileSerializer(_RcsAgentFields):
    """`PUT /bots`: the agent named by `id` (alias `bot_id`); omitted fields are kept."""

    id = serializers.CharField(max_length=40, required=False)
    bot_id = serializers.CharField(max_length=40, required=False)
    display_name = serializers.CharField(min_length=1, max_length=100, required=False)

    def validate(self, attrs):
        if not attrs.get("id") and not attrs.get("bot_id"):
            raise serializers.ValidationError({"id": ["The agent's id (or bot_id) is required."]})
        return attrs


# --- devices -------------------------------------------------------------------------------

class RcsDeviceSerializer(serializers.ModelSerializer):
    bot_id = serializers.CharField(source="agent_id", read_only=True)

    class Meta:
        model = RcsTestDevice
        fields = ["id", "bot_id", "phone", "status", "invited_at", "created_at"]
        read_only_fields = fields


class RcsPhoneSerializer(serializers.Serializer):
    phone = E164Field()


# --- templates -----------------------------------------------------------------------------

class RcsSuggestionSerializer(serializers.Serializer):
    type = serializers.ChoiceField(choices=["reply", "url", "dial"])
    text = serializers.CharField(min_length=1, max_length=LABEL_MAX)
    postback_data = serializers.CharField(required=False, max_length=2048)
    url = HttpsURLField(required=False)
    phone = E164Field(required=False)

    def validate(self, attrs):
        needed = {"url": "url", "dial": "phone"}.get(attrs["type"])
        if needed and not attrs.get(needed):
            raise serializers.ValidationError({needed: [f"A {attrs['type']} suggestion needs "
                                                        f"`{needed}`."]})
        return attrs


class RcsTemplateSerializer(serializers.ModelSerializer):
    bot_id = serializers.CharField(source="agent_id", read_only=True)

    class Meta:
        model = RcsTemplate
        fields = ["id", "bot_id", "name", "language", "body", "media_url", "suggestions",
                  "status", "rejection_reason", "created_at", "updated_at"]
        read_only_fields = fields


class RcsTemplateContentSerializer(serializers.Serializer):
    language = serializers.CharField(required=False, min_length=2, max_length=35)
    body = serializers.CharField(required=False, allow_blank=True, max_length=2000)
    media_url = HttpsURLField(required=False, allow_blank=True)
    suggestions = RcsSuggestionSerializer(many=True, required=False, max_length=MAX_SUGGESTIONS)

    def validate(self, attrs):
        if not attrs.get("body") and not attrs.get("media_url"):
            raise serializers.ValidationError({"body": ["A template needs a body or a "
                                                        "media_url."]})
        return attrs


class RcsTemplateCreateSerializer(RcsTemplateContentSerializer):
    name = serializers.CharField(max_length=64, help_text="[a-z0-9_], 1-64; unique per agent.")

    def validate_name(self, value: str) -> str:
        if not TEMPLATE_NAME.match(value):
            raise serializers.ValidationError("Use 1-64 lowercase letters, digits or _.")
        return value


# --- capability, reach, analytics ---------------------------------------------------------

class RcsCapabilitySerializer(serializers.Serializer):
    bot_id = serializers.CharField()
    phone = serializers.CharField()
    rcs_enabled = serializers.BooleanField()
    features = serializers.ListField(child=serializers.CharField())
    checked_at = serializers.DateTimeField()
    cached = serializers.BooleanField()


class RcsQualitySerializer(serializers.Serializer):
    bot_id = serializers.CharField()
    display_name = serializers.CharField()
    brand_name = serializers.CharField()
    status = serializers.CharField()
    verification_status = serializers.CharField()
    launched = serializers.BooleanField()
    carrier_statuses = serializers.DictField(child=serializers.DictField())
    carriers_launched = serializers.IntegerField()
    carriers_total = serializers.IntegerField()


class RcsReachScanInputSerializer(serializers.Serializer):
    segment_id = serializers.CharField(max_length=40)
    bot_id = serializers.CharField(max_length=40)


class RcsAnalyticsQuerySerializer(serializers.Serializer):
    days = serializers.IntegerField(required=False, min_value=1, max_value=90, default=30)


# --- commerce ------------------------------------------------------------------------------

class RcsProductSerializer(serializers.ModelSerializer):
    class Meta:
        model = RcsCatalogProduct
        fields = ["id", "retailer_id", "name", "description", "price", "currency",
                  "image_url", "url", "availability"]
        read_only_fields = fields


class RcsSendCatalogSerializer(serializers.Serializer):
    to = E164Field()
    product_ids = serializers.ListField(
        child=serializers.CharField(min_length=1, max_length=100), required=False,
        allow_empty=False, max_length=50, help_text="SKUs (retailer ids), up to 50; omit for "
                                                     "the whole catalog. Cut to the first 10.")
    body = serializers.CharField(required=False, allow_blank=True, max_length=2000)
    checkout_url = HttpsURLField(required=False)
    card_width = serializers.ChoiceField(choices=["SMALL", "MEDIUM"], required=False,
                                         default="MEDIUM")
    add_to_cart_label = serializers.CharField(required=False, min_length=1, max_length=LABEL_MAX)
    checkout_label = serializers.CharField(required=False, min_length=1, max_length=LABEL_MAX)
