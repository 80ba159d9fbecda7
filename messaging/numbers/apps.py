from django.apps import AppConfig


class NumbersConfig(AppConfig):
    """Number lookup and port-in requests."""

    name = "messaging.numbers"
    label = "numbers"
    default_auto_field = "django.db.models.BigAutoField"
