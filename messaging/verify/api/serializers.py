"""Serializers of the verify endpoints (Document 2, 2.4 and 4.7). Input serializers check
shapes and documented ranges; the rules live in the services."""

from __future__ import annotations

from django.utils import timezone
from rest_framework import serializers

from messaging.verify import delivery, texts
from messaging.verify.models import OPEN_STATUSES, Status, TotpFactor, Verification, VerifyProfile
from messaging.verify.services import SendOptions

ALL_CHANNELS = (delivery.OTP_CHANNELS + delivery.NETWORK_CHANNELS + delivery.FACTOR_CHANNELS
                + ("magic_link",))


def _channel_field(**kwargs) -> serializers.CharField:
    return serializers.CharField(max_length=32, help_text=f"One of {', '.join(ALL_CHANNELS)}; "
                                 "`totp`, `push`, `backup_code` answer 422 "
                                 "VERIFY_USE_FACTOR_ENDPOINT.", **kwargs)


class _OptionsSerializer(serializers.Serializer):
    channel = _channel_field(required=False, allow_null=True)
    code_length = serializers.IntegerField(required=False, allow_null=True, min_value=4,
                                           max_value=8, help_text="4-8, default 6 (or the "
                                                                  "profile's).")
    max_attempts = serializers.IntegerField(required=False, allow_null=True, min_value=1,
                                            max_value=10, help_text="1-10, default 3.")
    profile_id = serializers.CharField(required=False, allow_null=True, max_length=40)
    locale = serializers.CharField(required=False, allow_null=True, max_length=16,
                                   help_text=f"One of {', '.join(texts.LOCALES)} (a region "
                                             "suffix such as pt-BR is accepted); default en.")
    fallback = serializers.ListField(child=_channel_field(), required=False, max_length=5,
                                     help_text="Channels tried after `channel`: one without "
                                               "a provider is skipped at send time, the rest "
                                               "fall back on failure or no receipt.")
    template_variables = serializers.DictField(child=serializers.CharField(max_length=500),
                                               required=False)
    link_url = serializers.CharField(required=False, allow_null=True, max_length=1500,
                                     help_text="magic_link: the page the link opens; "
                                               "`token=...` is added to its query.")

    def validate_template_variables(self, value):
        if len(value) > 32:
            raise serializers.ValidationError("At most 32 keys.")
        return value

    def options(self, **extra) -> SendOptions:
        data = self.validated_data
        return SendOptions(
            channel=data.get("channel"), code_length=data.get("code_length"),
            max_attempts=data.get("max_attempts"), profile_id=data.get("profile_id"),
            locale=data.get("locale"), fallback=list(data.get("fallback") or []),
            template_variables=dict(data.get("template_variables") or {}),
            link_url=data.get("link_url"), **extra)


class SendSerializer(_OptionsSerializer):
    to = serializers.CharField(max_length=320, help_text="E.164 phone number (national "
                               "numbers use the organization's default_country), or an email "
                               "address for the email channel.")
    device_token = serializers.CharField(required=False, allow_null=True, max_length=4096,
                                         help_text="sna: the device-bound token from the "
                                                   "operator SDK.")


class BulkSerializer(_OptionsSerializer):
    recipients = serializers.ListField(child=serializers.CharField(max_length=320,
                                                                   allow_blank=True),
                                       min_length=1, max_length=1000)
    country = serializers.CharField(required=False, allow_null=True, min_length=2,
                                    max_length=2, help_text="ISO 3166-1 alpha-2 of national "
                                                            "numbers; default the "
                                                            "organization's.")


class CheckSerializer(serializers.Serializer):
    verification_id = serializers.CharField(required=False, max_length=40)
    to = serializers.CharField(required=False, max_length=320,
                               help_text="Instead of verification_id: the recipient's latest "
                                         "verification.")
    code = serializers.RegexField(r"^[0-9]{4,8}$", max_length=8, required=False,
                                  error_messages={"invalid": "The code is 4-8 digits."})
    token = serializers.CharField(required=False, max_length=512,
                                  help_text="Instead of an id and code: a magic link's token.")

    def validate(self, attrs):
        if attrs.get("token"):
            return attrs
        if not attrs.get("verification_id") and not attrs.get("to"):
            raise serializers.ValidationError({"verification_id": "verification_id (or to) "
                                                                  "is required."})
        if not attrs.get("code"):
            raise serializers.ValidationError({"code": "code (or token) is required."})
        return attrs


class VerificationSerializer(serializers.ModelSerializer):
    verification_id = serializers.CharField(source="pk", read_only=True)
    status = serializers.SerializerMethodField()
    attempts_remaining = serializers.IntegerField(read_only=True)

    class Meta:
        model = Verification
        fields = ["id", "verification_id", "status", "channel", "to", "profile_id",
                  "code_length", "max_attempts", "attempts", "attempts_remaining", "locale",
                  "fallback", "message_id", "cancel_reason", "created_at", "sent_at",
                  "expires_at", "verified_at", "ended_at"]
        read_only_fields = fields

    def get_status(self, obj: Verification) -> str:
        if obj.status in OPEN_STATUSES and obj.expires_at <= timezone.now():
            return Status.EXPIRED  # lapsed, the sweep has not run yet
        return obj.status


class ProfileSerializer(serializers.ModelSerializer):
    class Meta:
        model = VerifyProfile
        fields = ["id", "name", "channel", "code_length", "max_attempts",
                  "expiration_seconds", "locale", "sender", "template", "created_at",
                  "updated_at"]
        read_only_fields = fields


class ProfileWriteSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=200)
    channel = serializers.ChoiceField(choices=delivery.OTP_CHANNELS, required=False)
    code_length = serializers.IntegerField(min_value=4, max_value=8, required=False)
    max_attempts = serializers.IntegerField(min_value=1, max_value=10, required=False)
    expiration_seconds = serializers.IntegerField(min_value=60, max_value=86400,
                                                  required=False,
                                                  help_text="Code lifetime, default 600.")
    locale = serializers.CharField(max_length=16, required=False)
    sender = serializers.CharField(max_length=320, required=False, allow_blank=True,
                                   help_text="The from-address of the profile's sends.")
    template = serializers.CharField(max_length=1600, required=False, allow_blank=True,
                                     help_text="Body holding {code}; may use {name}, "
                                               "{minutes} and template_variables keys.")

    def validate_locale(self, value: str) -> str:
        locale = texts.normalize_locale(value)
        if locale is None:
            raise serializers.ValidationError(f"Use one of {', '.join(texts.LOCALES)}.")
        return locale

    def validate_template(self, value: str) -> str:
        if value and "{code}" not in value:
            raise serializers.ValidationError("A template must contain {code}.")
        return value


class FactorCreateSerializer(serializers.Serializer):
    identity = serializers.CharField(max_length=128, help_text="Your id of the end user.")
    friendly_name = serializers.CharField(max_length=128, required=False, allow_blank=True,
                                          help_text="Account name shown by the app.")


class FactorSerializer(serializers.ModelSerializer):
    factor_type = serializers.SerializerMethodField()

    class Meta:
        model = TotpFactor
        fields = ["id", "factor_type", "identity", "friendly_name", "status", "created_at",
                  "verified_at"]
        read_only_fields = fields

    def get_factor_type(self, obj) -> str:
        return "totp"


class FactorVerifySerializer(serializers.Serializer):
    code = serializers.RegexField(r"^[0-9]{6}$", error_messages={"invalid": "A 6-digit code."})


# --- Response shapes (documentation of the schema) -----------------------------------------


class SendResultSerializer(VerificationSerializer):
    test_code = serializers.CharField(required=False, help_text="Test mode only: the code "
                                                                "(magic_link: the token).")
    test_link = serializers.CharField(required=False,
                                      help_text="Test mode, magic_link only: the link.")

    class Meta(VerificationSerializer.Meta):
        fields = [*VerificationSerializer.Meta.fields, "test_code", "test_link"]


class CheckResultSerializer(VerificationSerializer):
    valid = serializers.BooleanField(help_text="Whether this code matched.")

    class Meta(VerificationSerializer.Meta):
        fields = [*VerificationSerializer.Meta.fields, "valid"]


class _RowErrorSerializer(serializers.Serializer):
    code = serializers.CharField()
    message = serializers.CharField()


class _BulkRowSerializer(serializers.Serializer):
    recipient = serializers.CharField()
    status = serializers.ChoiceField(choices=["sent", "failed"])
    verification_id = serializers.CharField(required=False)
    channel = serializers.CharField(required=False)
    test_code = serializers.CharField(required=False)
    test_link = serializers.CharField(required=False)
    error = _RowErrorSerializer(required=False)


class BulkResultSerializer(serializers.Serializer):
    total = serializers.IntegerField()
    sent = serializers.IntegerField()
    failed = serializers.IntegerField()
    results = _BulkRowSerializer(many=True)


class VerifyAnalyticsSerializer(serializers.Serializer):
    window_days = serializers.IntegerField()
    total = serializers.IntegerField()
    by_status = serializers.DictField(child=serializers.IntegerField())
    by_channel = serializers.DictField(child=serializers.IntegerField())
    avg_verify_seconds = serializers.FloatField(allow_null=True)


class _DestinationSerializer(serializers.Serializer):
    prefix = serializers.CharField()
    sent = serializers.IntegerField()
    verified = serializers.IntegerField()
    conversion_rate = serializers.FloatField()
    score = serializers.FloatField()
    band = serializers.ChoiceField(choices=["low", "medium", "high"])
    anomaly = serializers.BooleanField()
    estimated_spend_at_risk_usd = serializers.FloatField()


class VerifyConversionAnomalySerializer(serializers.Serializer):
    window_days = serializers.IntegerField()
    total_sent = serializers.IntegerField()
    total_verified = serializers.IntegerField()
    baseline_conversion_rate = serializers.FloatField(allow_null=True)
    flagged_destinations = serializers.IntegerField()
    estimated_spend_at_risk_usd = serializers.FloatField()
    destinations = _DestinationSerializer(many=True)


class FactorCreatedSerializer(FactorSerializer):
    secret = serializers.CharField(help_text="Base32 secret, shown once.")
    uri = serializers.CharField(help_text="otpauth://totp/... for the authenticator app.")
    otpauth_uri = serializers.CharField(help_text="Same as uri.")

    class Meta(FactorSerializer.Meta):
        fields = [*FactorSerializer.Meta.fields, "secret", "uri", "otpauth_uri"]


class FactorCheckSerializer(FactorSerializer):
    factor_id = serializers.CharField()
    valid = serializers.BooleanField()

    class Meta(FactorSerializer.Meta):
        fields = [*FactorSerializer.Meta.fields, "factor_id", "valid"]
