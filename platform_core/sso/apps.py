from django.apps import AppConfig


class SsoConfig(AppConfig):
    name = "platform_core.sso"
    label = "sso"
    default_auto_field = "django.db.models.BigAutoField"
