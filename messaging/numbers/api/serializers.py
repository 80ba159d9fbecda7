"""Numbers: lookup record and porting requests (Document 2, 4.4).

Porting bodies use the document's camelCase names (`currentCarrier`, `loaFileUrl`, ...).
"""

from __future__ import annotations

import phonenumbers
from rest_framework import serializers

from messaging.numbers.models import PortingRequest

MAX_PORTING_NUMBERS = 100


class LookupSerializer(serializers.Serializer):
    phone_number = serializers.CharField(help_text="The input as given.")
    valid = serializers.BooleanField()
    possible = serializers.BooleanField()
    validation_errors = serializers.ListField(
        child=serializers.CharField(),
        help_text="Why the number is not valid: NOT_A_NUMBER, INVALID_COUNTRY_CODE, "
                  "TOO_SHORT, TOO_LONG, INVALID_LENGTH, INVALID_NUMBER. Empty when valid.")
    e164 = serializers.CharField(allow_null=True)
    national_format = serializers.CharField(allow_null=True)
    international_format = serializers.CharField(allow_null=True)
    country_code = serializers.IntegerField(allow_null=True, help_text="Calling code, e.g. 44.")
    region = serializers.CharField(allow_null=True, help_text="ISO 3166-1 alpha-2, e.g. GB.")
    location = serializers.CharField(allow_null=True, help_text="Geographic area, where known.")
    # Plain string (not an enum component): its values are listed here.
    type = serializers.CharField(
        allow_null=True,
        help_text="mobile, fixed_line, fixed_line_or_mobile (the numbering plan does not "
                  "tell them apart, as in the US), toll_free, premium_rate, shared_cost, voip, "
                  "personal, pager, uan, voicemail or unknown; null when not valid.")
    carrier = serializers.CharField(allow_null=True,
                                    help_text="Original carrier of the range, where known.")
    time_zones = serializers.ListField(child=serializers.CharField())


class EstimatedCompletionSerializer(serializers.Serializer):
    earliest = serializers.DateField()
    latest = serializers.DateField()
    business_days = serializers.CharField()


class PortingRequestSerializer(serializers.ModelSerializer):
    currentCarrier = serializers.CharField(source="current_carrier")  # noqa: N815
    authorizedSigner = serializers.CharField(source="authorized_signer")  # noqa: N815
    accountNumber = serializers.SerializerMethodField(  # noqa: N815
        help_text="Masked to its last four characters.")
    accountPinProvided = serializers.SerializerMethodField(  # noqa: N815
        help_text="Whether an account PIN was given; the PIN itself is never returned.")
    loaFileUrl = serializers.CharField(source="loa_file_url")  # noqa: N815
    estimated_completion = serializers.SerializerMethodField()

    class Meta:
        model = PortingRequest
        fields = ["id", "status", "numbers", "currentCarrier", "country", "authorizedSigner",
                  "accountNumber", "accountPinProvided", "loaFileUrl", "loa_file_id",
                  "estimated_completion", "created_at", "updated_at"]
        read_only_fields = fields

    def get_accountNumber(self, obj) -> str:  # noqa: N802
        value = obj.account_number
        return "*" * max(len(value) - 4, 0) + value[-4:] if value else ""

    def get_accountPinProvided(self, obj) -> bool:  # noqa: N802
        return bool(obj.account_pin)

    def get_estimated_completion(self, obj) -> EstimatedCompletionSerializer:
        return {"earliest": obj.estimated_completion_earliest.isoformat(),
                "latest": obj.estimated_completion_latest.isoformat(),
                "business_days": "7-14"}


class PortingCreateSerializer(serializers.Serializer):
    numbers = serializers.ListField(
        child=serializers.CharField(max_length=32), min_length=1,
        max_length=MAX_PORTING_NUMBERS, help_text="E.164 numbers, all of `country`.")
    currentCarrier = serializers.CharField(max_length=200)  # noqa: N815
    country = serializers.CharField(min_length=2, max_length=2,
                                    help_text="ISO 3166-1 alpha-2 of the numbers.")
    authorizedSigner = serializers.CharField(max_length=200)  # noqa: N815
    accountNumber = serializers.CharField(max_length=100)  # noqa: N815
    accountPin = serializers.CharField(  # noqa: N815
        max_length=64, required=False, allow_blank=True, write_only=True,
        help_text="Secret: encrypted at rest, never returned.")
    loaFileUrl = serializers.URLField(  # noqa: N815
        max_length=2048,
        help_text="The signed URL the file upload returned for the letter of authorization.")

    def validate_country(self, value: str) -> str:
        value = value.upper()
        if value not in phonenumbers.SUPPORTED_REGIONS:
            raise serializers.ValidationError("Not a known ISO 3166-1 alpha-2 country code.")
        return value
