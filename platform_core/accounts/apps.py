from django.apps import AppConfig


class AccountsConfig(AppConfig):
    name = "platform_core.accounts"
    label = "accounts"
    verbose_name = "Account security"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from . import error_codes  # noqa: F401  (registers this family's codes)
