from django.apps import AppConfig


class VerifyConfig(AppConfig):
    """One-time codes over every channel, profiles, TOTP factors, the fraud guard."""

    name = "messaging.verify"
    label = "verify"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from platform_core.events.bus import register_fanout

        from . import error_codes  # noqa: F401  (registers the verify codes)
        from .tracking import handle_batch, handle_one

        # pending -> sent / failed from the message status events.
        register_fanout("verify_delivery", handle_one, batch=handle_batch)
