from django.apps import AppConfig


class ProvidersConfig(AppConfig):
    """Per-organization channel provider accounts and the live provider adapters."""

    name = "messaging.providers"
    label = "providers"
    default_auto_field = "django.db.models.BigAutoField"
