from django.apps import AppConfig


class VoiceConfig(AppConfig):
    name = "voice"
    default_auto_field = "django.db.models.BigAutoField"
