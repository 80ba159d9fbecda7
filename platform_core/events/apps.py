from django.apps import AppConfig


class EventsConfig(AppConfig):
    name = "platform_core.events"
    label = "events"
    default_auto_field = "django.db.models.BigAutoField"
