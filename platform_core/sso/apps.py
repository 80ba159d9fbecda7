from django.apps import AppConfig


class SsoConfig(AppConfig):
    name = "platform_core.sso"
    label = "sso"
    verbose_name = "Single sign-on and provisioning"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Registers this family's error codes.
        from . import error_codes  # noqa: F401
