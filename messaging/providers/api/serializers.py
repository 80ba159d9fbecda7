from __future__ import annotations

from rest_framework import serializers

from messaging.providers.models import ProviderAccount, ProviderName


class ProviderAccountSerializer(serializers.ModelSerializer):
    """A provider account as read back: never its credentials."""

    credentials_configured = serializers.BooleanField(
        read_only=True,
        help_text="True when credentials are stored. They are write-only and never returned.")
    base_url = serializers.SerializerMethodField(
        help_text="Override of the provider's API address (null: the provider's own).")

    class Meta:
        model = ProviderAccount
        fields = ["id", "channel", "provider", "config", "base_url", "enabled",
                  "credentials_configured", "created_at", "updated_at"]

    def get_base_url(self, obj: ProviderAccount) -> str | None:
        return obj.base_url or None


class ProviderAccountWriteSerializer(serializers.Serializer):
    provider = serializers.ChoiceField(choices=ProviderName.choices)
    credentials = serializers.DictField(
        required=False, write_only=True,
        help_text="Secrets, stored encrypted and never returned. twilio: auth_token (or "
                  "api_key_sid + api_key_secret); whatsapp_cloud: access_token (app_secret "
                  "for webhook signatures); rcs_business: access_token or service_account "
                  "(the JSON key); smtp: password (username may go in config); vonage: api_key + "
                  "api_secret; telegram_gateway: access_token. Omitted on a "
                  "replace with the same provider: the stored credentials are kept.")
    config = serializers.DictField(
        required=False, default=dict,
        help_text="twilio: account_sid, from, messaging_service_sid, voice, "
                  "flashcall_prefix (the caller id range of flash calls); whatsapp_cloud: "
                  "phone_number_id, waba_id, api_version; rcs_business: agent_id; smtp: host, "
                  "port, use_tls, use_ssl, from, username, timeout; vonage: from (the Viber "
                  "service id); telegram_gateway: sender_username. Any provider: "
                  "status_callback_url.")
    base_url = serializers.URLField(
        required=False, allow_blank=True, allow_null=True, max_length=2048,
        help_text="Override of the provider's API address; https and public outside "
                  "development.")
    enabled = serializers.BooleanField(required=False, default=True)
