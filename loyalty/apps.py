from django.apps import AppConfig


class LoyaltyConfig(AppConfig):
    name = "loyalty"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from platform_core.events.services import reserve_tracked_event_prefix

        from . import error_codes  # noqa: F401

        # Redemptions and adjustments are recorded by loyalty's own endpoints only.
        reserve_tracked_event_prefix("loyalty.")
