from django.apps import AppConfig


class SegmentsConfig(AppConfig):
    """Saved segments, the filter tree compiler, click cohorts, autopilot and exports."""

    name = "contacts.segments"
    label = "segments"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from . import error_codes  # noqa: F401  (registers AI_PARSE_FAILED, AI_SUGGEST_FAILED)
