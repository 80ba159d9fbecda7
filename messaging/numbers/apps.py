from django.apps import AppConfig


class NumbersConfig(AppConfig):
    """Number lookup and port-in requests."""

    name = "messaging.numbers"
    label = "numbers"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # This family's codes, and those of the inbound webhooks (messaging/inbound, a
        # family of the `messaging` app, whose AppConfig is not ours) at start-up.
        from messaging.inbound import error_codes as inbound_codes  # noqa: F401

        from . import error_codes  # noqa: F401
