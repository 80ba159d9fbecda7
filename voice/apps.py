from django.apps import AppConfig


class VoiceConfig(AppConfig):
    name = "voice"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from . import error_codes  # noqa: F401
