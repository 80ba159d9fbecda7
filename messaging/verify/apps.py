from django.apps import AppConfig


class VerifyConfig(AppConfig):
    """One-time codes over every channel, profiles, TOTP factors, the fraud guard."""

    name = "messaging.verify"
    label = "verify"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from . import error_codes  # noqa: F401  (registers the verify codes)
