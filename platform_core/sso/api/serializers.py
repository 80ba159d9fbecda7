"""Bodies of the SSO settings routes (0-conventions.md section 2) and the ticket exchange."""

from __future__ import annotations

from rest_framework import serializers

from platform_core.identity.api.serializers import LoginResultSerializer
from platform_core.tenancy.models import Role

from .. import saml


class SamlSettingsSerializer(serializers.Serializer):
    enabled = serializers.BooleanField()
    idp_entity_id = serializers.CharField(allow_blank=True)
    idp_sso_url = serializers.CharField(allow_blank=True)
    idp_slo_url = serializers.CharField(allow_blank=True)
    idp_x509_cert = serializers.CharField(allow_blank=True)
    idp_metadata_xml = serializers.CharField(allow_blank=True)
    sp_entity_id = serializers.CharField(help_text="Entity id of this service provider.")
    acs_url = serializers.CharField(help_text="Assertion Consumer Service URL (HTTP-POST).")
    metadata_url = serializers.CharField(
        help_text="Service-provider metadata XML to import into the identity provider."
    )
    slo_url = serializers.CharField(help_text="Single-logout URL of this service provider.")
    login_url = serializers.CharField(help_text="Where the dashboard starts a sign-in.")
    sp_certificate = serializers.CharField(
        allow_blank=True, help_text="This SP's signing certificate (PEM)."
    )
    updated_at = serializers.DateTimeField(allow_null=True)


class SamlSettingsUpdateSerializer(serializers.Serializer):
    enabled = serializers.BooleanField(required=False)
    idp_entity_id = serializers.CharField(max_length=1024, allow_blank=True, required=False)
    idp_sso_url = serializers.URLField(max_length=2048, allow_blank=True, required=False)
    idp_slo_url = serializers.URLField(max_length=2048, allow_blank=True, required=False)
    idp_x509_cert = serializers.CharField(
        allow_blank=True,
        required=False,
        trim_whitespace=True,
        help_text="PEM (or its base64 body).",
    )
    idp_metadata_xml = serializers.CharField(
        allow_blank=True,
        required=False,
        trim_whitespace=True,
        help_text="IdP metadata XML, instead of the three idp_* fields.",
    )

    def validate_idp_x509_cert(self, value: str) -> str:
        if value:
            try:
                return saml.normalize_certificate(value)
            except ValueError as exc:
                raise serializers.ValidationError(str(exc)) from None
        return value

    def validate_idp_metadata_xml(self, value: str) -> str:
        if value:
            try:
                saml.parse_idp_metadata(value)
            except ValueError as exc:
                raise serializers.ValidationError(str(exc)) from None
        return value


class ScimSettingsSerializer(serializers.Serializer):
    enabled = serializers.BooleanField()
    token_last4 = serializers.CharField(allow_blank=True)
    token_created_at = serializers.DateTimeField(allow_null=True)
    max_role = serializers.ChoiceField(
        choices=Role.choices, help_text="Highest role SCIM groups may grant."
    )
    group_role_map = serializers.DictField(
        child=serializers.ChoiceField(choices=Role.choices),
        help_text="Group displayName -> role, on top of groups named after a role.",
    )
    base_url = serializers.CharField(help_text="SCIM base URL of this organization.")


class ScimSettingsUpdateSerializer(serializers.Serializer):
    enabled = serializers.BooleanField(
        required=False, help_text="false revokes the token; true needs a generated token."
    )
    max_role = serializers.ChoiceField(choices=Role.choices, required=False)
    group_role_map = serializers.DictField(
        child=serializers.ChoiceField(choices=Role.choices), required=False
    )

    def validate_group_role_map(self, value: dict) -> dict:
        cleaned = {}
        for name, role in value.items():
            name = str(name).strip().lower()
            if not name or len(name) > 400:
                raise serializers.ValidationError("Group names are 1 to 400 characters.")
            cleaned[name] = role
        return cleaned


class ScimTokenSerializer(serializers.Serializer):
    token = serializers.CharField(help_text="Shown once; send as Authorization: Bearer.")
    token_last4 = serializers.CharField()
    token_created_at = serializers.DateTimeField()
    base_url = serializers.CharField()


class SsoExchangeSerializer(serializers.Serializer):
    ticket = serializers.CharField(max_length=200)


class SsoExchangeResultSerializer(LoginResultSerializer):
    redirect = serializers.CharField(help_text="Same-site path to open after sign-in.")
