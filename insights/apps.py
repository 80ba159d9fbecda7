from django.apps import AppConfig


class InsightsConfig(AppConfig):
    name = "insights"
    default_auto_field = "django.db.models.BigAutoField"
