from django.apps import AppConfig


class WhatsAppConfig(AppConfig):
    """WhatsApp channel management (Document 2, 4.5): connection, business profile,
    catalogs, calling, block list, flows and the interactive / flow / marketing sends."""

    name = "messaging.whatsapp"
    label = "whatsapp"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from . import (
            error_codes,  # noqa: F401  (registers the whatsapp codes)
            inbound,
        )

        inbound.install()
