from django.apps import AppConfig


class LinksConfig(AppConfig):
    """Short tracked links and their click records (read by segments, written by messaging)."""

    name = "messaging.links"
    label = "links"
    default_auto_field = "django.db.models.BigAutoField"
