from django.apps import AppConfig


class AgentsConfig(AppConfig):
    """The AI engine (agents/engine), metering (agents/usage) and the /api/v1/ai API."""

    name = "agents"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from . import error_codes  # noqa: F401  (registers the AI codes)
        from .engine import hooks

        hooks.install()
