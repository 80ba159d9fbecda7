from __future__ import annotations

import functools
import zoneinfo

from rest_framework import serializers

from platform_core.identity.models import APIKey, KeyMode, KeyType, UserSession
from platform_core.tenancy.models import Membership, Organization, Role


@functools.cache
def _iana_time_zones() -> frozenset[str]:
    # Names of the IANA database only; not files some systems keep beside it.
    return frozenset(zoneinfo.available_timezones()) - {"localtime", "posixrules", "Factory"}


@functools.cache
def _iso_countries() -> frozenset[str]:
    """ISO 3166-1 alpha-2: phonenumbers' regions without its non-ISO ones (AC, TA, XK), plus
    the assigned codes that have no telephone numbering (AQ, BV, GS, HM, PN, TF, UM)."""
    import phonenumbers

    return (frozenset(phonenumbers.SUPPORTED_REGIONS) - {"AC", "TA", "XK"}) | {
        "AQ",
        "BV",
        "GS",
        "HM",
        "PN",
        "TF",
        "UM",
    }


class OrganizationSerializer(serializers.ModelSerializer):
    class Meta:
        model = Organization
        fields = [
            "id",
            "name",
            "slug",
            "sandbox",
            "timezone",
            "currency",
            "default_country",
            "created_at",
        ]
        read_only_fields = ["id", "slug", "created_at"]


class OrganizationUpdateSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=200, required=False)
    sandbox = serializers.BooleanField(required=False)
    timezone = serializers.CharField(max_length=64, required=False)
    currency = serializers.RegexField(r"^[A-Za-z]{3}$", required=False)
    default_country = serializers.RegexField(r"^[A-Za-z]{2}$", required=False)

    def validate_timezone(self, value: str) -> str:
        if value not in _iana_time_zones():
            raise serializers.ValidationError("Unknown IANA time zone.")
        return value

    def validate_currency(self, value: str) -> str:
        return value.upper()

    def validate_default_country(self, value: str) -> str:
        value = value.upper()
        if value not in _iso_countries():
            raise serializers.ValidationError("Unknown ISO 3166-1 alpha-2 country code.")
        return value


class UserSummarySerializer(serializers.Serializer):
    id = serializers.CharField()
    email = serializers.EmailField()
    name = serializers.CharField()


class LoginSerializer(serializers.Serializer):
    email = serializers.CharField()
    password = serializers.CharField(trim_whitespace=False)
    organization = serializers.CharField(required=False, allow_blank=True)


def session_result(session, token: str) -> dict:
    """What a sign-in answers (login, SSO ticket exchange): the token and who it is for."""
    return {
        "token": token,
        "expires_at": session.expires_at,
        "session_id": session.pk,
        "user": {"id": session.user.pk, "email": session.user.email, "name": session.user.name},
        "organization": OrganizationSerializer(session.organization).data,
    }


class LoginResultSerializer(serializers.Serializer):
    token = serializers.CharField()
    expires_at = serializers.DateTimeField()
    session_id = serializers.CharField()
    user = UserSummarySerializer()
    organization = OrganizationSerializer()


class SessionSerializer(serializers.ModelSerializer):
    current = serializers.SerializerMethodField()

    class Meta:
        model = UserSession
        fields = [
            "id",
            "created_at",
            "expires_at",
            "revoked_at",
            "last_seen_at",
            "ip_address",
            "user_agent",
            "current",
        ]

    def get_current(self, obj: UserSession) -> bool:
        return obj.pk == self.context.get("current_session_id")


class MemberSerializer(serializers.ModelSerializer):
    """A user as seen inside one organization (the membership carries the role)."""

    id = serializers.CharField(source="user.id", read_only=True)
    email = serializers.EmailField(source="user.email", read_only=True)
    name = serializers.CharField(source="user.name", read_only=True)
    is_active = serializers.BooleanField(source="user.is_active", read_only=True)
    joined_at = serializers.DateTimeField(source="created_at", read_only=True)

    class Meta:
        model = Membership
        fields = ["id", "email", "name", "role", "is_active", "joined_at"]


class MemberCreateSerializer(serializers.Serializer):
    email = serializers.EmailField()
    name = serializers.CharField(max_length=200, required=False, allow_blank=True, default="")
    role = serializers.ChoiceField(choices=Role.choices)
    password = serializers.CharField(required=False, write_only=True, trim_whitespace=False)

    def validate_password(self, value: str) -> str:
        from django.contrib.auth.password_validation import validate_password

        validate_password(value)
        return value


class MemberUpdateSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=200, required=False, allow_blank=True)
    role = serializers.ChoiceField(choices=Role.choices, required=False)


class APIKeySerializer(serializers.ModelSerializer):
    status = serializers.SerializerMethodField()

    class Meta:
        model = APIKey
        fields = [
            "id",
            "name",
            "type",
            "mode",
            "prefix",
            "last4",
            "scopes",
            "allowed_ips",
            "status",
            "created_by",
            "created_at",
            "last_used_at",
            "revoked_at",
        ]

    def get_status(self, obj: APIKey) -> str:
        return "active" if obj.revoked_at is None else "revoked"


class APIKeyCreatedSerializer(APIKeySerializer):
    key = serializers.CharField(help_text="The full key. Shown once, never again.")

    class Meta(APIKeySerializer.Meta):
        fields = [*APIKeySerializer.Meta.fields, "key"]


class APIKeyCreateSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=200)
    type = serializers.ChoiceField(choices=KeyType.choices, default=KeyType.SECRET)
    mode = serializers.ChoiceField(choices=KeyMode.choices, required=False)
    scopes = serializers.ListField(child=serializers.CharField(max_length=64), allow_empty=False)
    allowed_ips = serializers.ListField(
        child=serializers.CharField(max_length=64), required=False, default=list
    )

    def validate_allowed_ips(self, value: list[str]) -> list[str]:
        import ipaddress

        for cidr in value:
            try:
                ipaddress.ip_network(cidr, strict=False)
            except ValueError:
                raise serializers.ValidationError(
                    f"{cidr!r} is not an IP address or CIDR range."
                ) from None
        return value
