"""Request and response shapes of /api/v1/auth (account security)."""

from __future__ import annotations

from rest_framework import serializers


class ForgotPasswordSerializer(serializers.Serializer):
    email = serializers.EmailField(max_length=254)


class ForgotPasswordResultSerializer(serializers.Serializer):
    message = serializers.CharField()


class ResetPasswordSerializer(serializers.Serializer):
    token = serializers.CharField(max_length=200, trim_whitespace=True)
    password = serializers.CharField(max_length=512, trim_whitespace=False)


class ResetPasswordResultSerializer(serializers.Serializer):
    password_reset = serializers.BooleanField()
    sessions_revoked = serializers.IntegerField()


class RevokeAPIKeysResultSerializer(serializers.Serializer):
    revoked_count = serializers.IntegerField()


class TermsConsentSerializer(serializers.Serializer):
    terms_version = serializers.CharField(max_length=64)
    privacy_version = serializers.CharField(max_length=64)
    locale = serializers.RegexField(r"^[A-Za-z]{2,8}([-_][A-Za-z0-9]{1,8})*$", max_length=35,
                                    required=False, allow_blank=True)


class TermsConsentRecordSerializer(serializers.Serializer):
    id = serializers.CharField()
    user_id = serializers.CharField()
    terms_version = serializers.CharField()
    privacy_version = serializers.CharField()
    locale = serializers.CharField()
    accepted_at = serializers.DateTimeField()
    ip_address = serializers.IPAddressField(allow_null=True)
    user_agent = serializers.CharField()


class ImpersonationTokenSerializer(serializers.Serializer):
    token = serializers.CharField(max_length=200)


class ImpersonationOperatorSerializer(serializers.Serializer):
    id = serializers.CharField(allow_null=True)
    email = serializers.EmailField()


class ImpersonationOrganizationSerializer(serializers.Serializer):
    id = serializers.CharField()
    slug = serializers.CharField()
    name = serializers.CharField()


class ImpersonationUserSerializer(serializers.Serializer):
    id = serializers.CharField()
    email = serializers.EmailField()
    name = serializers.CharField()


class ImpersonationSessionTokenSerializer(serializers.Serializer):
    token = serializers.CharField(help_text="Session JWT of the impersonated user.")
    session_id = serializers.CharField()
    expires_at = serializers.DateTimeField()


class ImpersonationExchangeResultSerializer(serializers.Serializer):
    grant_id = serializers.CharField()
    operator = ImpersonationOperatorSerializer()
    organization = ImpersonationOrganizationSerializer()
    user = ImpersonationUserSerializer()
    reason = serializers.CharField()
    expires_at = serializers.DateTimeField(help_text="When the impersonation token expired.")
    session = ImpersonationSessionTokenSerializer()
