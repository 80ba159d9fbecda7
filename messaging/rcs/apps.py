from django.apps import AppConfig


class RcsConfig(AppConfig):
    """RCS business messaging: brands, agents, testers, templates, quality, analytics,
    commerce (Document 2, 2.8 and 4.6)."""

    name = "messaging.rcs"
    label = "rcs"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from . import error_codes  # noqa: F401  (registers the rcs codes)
