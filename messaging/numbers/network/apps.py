from django.apps import AppConfig


class NetworkApisConfig(AppConfig):
    """Network-signal checks (Document 3, 4.8): the operator adapter, sandbox double, risk."""

    name = "messaging.numbers.network"
    label = "network_apis"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from . import error_codes  # noqa: F401
        from .adapters import install_verify_adapter

        # Verify's `sna` channel asks the same operator adapter (one adapter, two users).
        install_verify_adapter()
