from django.apps import AppConfig


class ContactsConfig(AppConfig):
    name = "contacts"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from . import error_codes  # noqa: F401  (registers this family's codes)
