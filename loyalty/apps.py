from django.apps import AppConfig


class LoyaltyConfig(AppConfig):
    name = "loyalty"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from . import error_codes  # noqa: F401
