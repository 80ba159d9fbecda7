from django.apps import AppConfig


class ProvidersConfig(AppConfig):
    """Per-organization channel provider accounts and the live provider adapters."""

    name = "messaging.providers"
    label = "providers"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Registers PROVIDER_UNAVAILABLE, the hardened client's error.
        from platform_core.net import provider_client  # noqa: F401

        from .adapters.rcs import RcsBusinessProvider
        from .adapters.smtp import SMTPProvider
        from .adapters.telegram import TelegramGatewayProvider
        from .adapters.twilio import TwilioProvider
        from .adapters.vonage import VonageViberProvider
        from .adapters.whatsapp import WhatsAppCloudProvider
        from .registry import register_provider

        register_provider(TwilioProvider.name, TwilioProvider)
        register_provider(WhatsAppCloudProvider.name, WhatsAppCloudProvider)
        register_provider(RcsBusinessProvider.name, RcsBusinessProvider)
        register_provider(SMTPProvider.name, SMTPProvider)
        register_provider(VonageViberProvider.name, VonageViberProvider)
        register_provider(TelegramGatewayProvider.name, TelegramGatewayProvider)
