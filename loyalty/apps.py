from django.apps import AppConfig


class LoyaltyConfig(AppConfig):
    name = "loyalty"
    default_auto_field = "django.db.models.BigAutoField"
