from django.apps import AppConfig


class PlatformCoreConfig(AppConfig):
    name = "platform_core"
    verbose_name = "Platform core"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Registers this app's error codes and signal handlers.
        from . import error_codes, signals  # noqa: F401
        from .api import schema  # noqa: F401  (registers the OpenAPI auth extension)
