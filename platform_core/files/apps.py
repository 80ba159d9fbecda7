from django.apps import AppConfig


class FilesConfig(AppConfig):
    name = "platform_core.files"
    label = "files"
    verbose_name = "Files"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Registers this family's error codes.
        from . import error_codes  # noqa: F401
