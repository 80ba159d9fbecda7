"""Request shapes of the network-signal checks (Document 3, 4.8)."""

from __future__ import annotations

import math
import re

import phonenumbers
from rest_framework import serializers

HEX64 = re.compile(r"[0-9a-fA-F]{64}")
CURRENCY = re.compile(r"[A-Z]{3}")


class NetworkStatusSerializer(serializers.Serializer):
    enabled = serializers.BooleanField()


class E164Field(serializers.CharField):
    def __init__(self, **kwargs) -> None:
        kwargs.setdefault("max_length", 20)
        kwargs.setdefault("help_text", "E.164, e.g. +14155550123.")
        super().__init__(**kwargs)

    def to_internal_value(self, data):
        text = super().to_internal_value(data)
        try:
            number = phonenumbers.parse(text, None) if re.fullmatch(r"\+[1-9][0-9]{6,14}",
                                                                     text) else None
        except phonenumbers.NumberParseException:
            number = None
        if number is None or not phonenumbers.is_possible_number(number):
            raise serializers.ValidationError("Must be an E.164 number (+ and 7-15 digits).")
        return text


class HashedField(serializers.CharField):
    def to_internal_value(self, data):
        text = super().to_internal_value(data)
        if not HEX64.fullmatch(text):
            raise serializers.ValidationError("SHA-256 of the E.164 number, 64 hex characters.")
        return text.lower()


class _OneOf(serializers.Serializer):
    phoneNumber = E164Field(required=False)  # noqa: N815 - the API's (CAMARA) field names
    hashedPhoneNumber = HashedField(required=False)  # noqa: N815

    def validate(self, attrs):
        if ("phoneNumber" in attrs) == ("hashedPhoneNumber" in attrs):
            raise serializers.ValidationError(
                {"phoneNumber": "Give exactly one of phoneNumber and hashedPhoneNumber."})
        return attrs


class NumberVerificationSerializer(_OneOf):
    accessToken = serializers.CharField(max_length=4096, required=False)  # noqa: N815


class ScamSignalSerializer(_OneOf):
    pass


class PhoneSerializer(serializers.Serializer):
    phoneNumber = E164Field()  # noqa: N815


class SimSwapCheckSerializer(PhoneSerializer):
    maxAge = serializers.IntegerField(min_value=1, max_value=2400, default=240)  # noqa: N815


class KycSerializer(PhoneSerializer):
    name = serializers.CharField(max_length=200, required=False)
    givenName = serializers.CharField(max_length=200, required=False)  # noqa: N815
    familyName = serializers.CharField(max_length=200, required=False)  # noqa: N815
    birthdate = serializers.DateField(required=False, input_formats=["%Y-%m-%d"])
    idDocument = serializers.CharField(max_length=100, required=False)  # noqa: N815
    email = serializers.EmailField(max_length=254, required=False)


class LocationSerializer(PhoneSerializer):
    latitude = serializers.FloatField(min_value=-90, max_value=90)
    longitude = serializers.FloatField(min_value=-180, max_value=180)
    radius = serializers.IntegerField(min_value=2000, max_value=200000)
    maxAge = serializers.IntegerField(min_value=60, max_value=3600, required=False)  # noqa: N815


class ChargeSerializer(PhoneSerializer):
    amount = serializers.DecimalField(max_digits=14, decimal_places=4,
                                      help_text="Positive, major units (e.g. 4.99).")
    currency = serializers.CharField(min_length=3, max_length=3)
    description = serializers.CharField(max_length=140)
    merchantReference = serializers.CharField(max_length=128, required=False)  # noqa: N815
    idempotencyKey = serializers.CharField(max_length=128, required=False)  # noqa: N815

    def validate_amount(self, value):
        if not value.is_finite() or value <= 0:
            raise serializers.ValidationError("Must be a positive finite amount.")
        return value

    def validate_currency(self, value: str) -> str:
        if not CURRENCY.fullmatch(value):
            raise serializers.ValidationError("ISO 4217 code, three capital letters.")
        return value


class AgeSerializer(KycSerializer):
    ageThreshold = serializers.IntegerField(min_value=13, max_value=120)  # noqa: N815


class ContextSerializer(serializers.Serializer):
    action = serializers.CharField(max_length=64, required=False)
    reference = serializers.CharField(max_length=128, required=False)


class ClaimedLocationSerializer(serializers.Serializer):
    latitude = serializers.FloatField(min_value=-90, max_value=90)
    longitude = serializers.FloatField(min_value=-180, max_value=180)
    radius = serializers.IntegerField(min_value=2000, max_value=200000)
    maxAge = serializers.IntegerField(min_value=60, max_value=3600, required=False)  # noqa: N815


class WeightsSerializer(serializers.Serializer):
    sim_swap = serializers.IntegerField(min_value=0, max_value=100, required=False)
    number_verification = serializers.IntegerField(min_value=0, max_value=100, required=False)
    device_location = serializers.IntegerField(min_value=0, max_value=100, required=False)
    call_forwarding = serializers.IntegerField(min_value=0, max_value=100, required=False)
    reputation = serializers.IntegerField(min_value=0, max_value=100, required=False)
    roaming = serializers.IntegerField(min_value=0, max_value=100, required=False)
    reachability = serializers.IntegerField(min_value=0, max_value=100, required=False)

    def to_internal_value(self, data):
        unknown = set(data) - set(self.fields) if isinstance(data, dict) else set()
        if unknown:
            raise serializers.ValidationError(
                f"Unknown signals: {', '.join(sorted(map(str, unknown)))[:200]}.")
        return super().to_internal_value(data)


class ThresholdsSerializer(serializers.Serializer):
    review = serializers.IntegerField(min_value=0, max_value=100, required=False)
    deny = serializers.IntegerField(min_value=0, max_value=100, required=False)

    def validate(self, attrs):
        review, deny = attrs.get("review", 40), attrs.get("deny", 70)
        if review > deny:
            raise serializers.ValidationError("review must not be above deny.")
        return attrs


class RiskSerializer(PhoneSerializer):
    context = ContextSerializer(required=False)
    claimedLocation = ClaimedLocationSerializer(required=False)  # noqa: N815
    simSwapMaxAge = serializers.IntegerField(min_value=1, max_value=2400, default=240)  # noqa: N815
    accessToken = serializers.CharField(max_length=4096, required=False)  # noqa: N815
    reputationRiskLevel = serializers.ChoiceField(  # noqa: N815
        choices=["low", "medium", "high", "unknown"], required=False)
    roaming = serializers.BooleanField(required=False, allow_null=True, default=None)
    callForwardingUnconditional = serializers.BooleanField(  # noqa: N815
        required=False, allow_null=True, default=None)
    weights = WeightsSerializer(required=False)
    thresholds = ThresholdsSerializer(required=False)


def finite(value: float) -> bool:
    return math.isfinite(value)
