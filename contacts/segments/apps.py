from django.apps import AppConfig


class SegmentsConfig(AppConfig):
    name = "contacts.segments"
    label = "segments"
    default_auto_field = "django.db.models.BigAutoField"
