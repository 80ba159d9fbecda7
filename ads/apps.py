from django.apps import AppConfig


class AdsConfig(AppConfig):
    name = "ads"
    default_auto_field = "django.db.models.BigAutoField"
