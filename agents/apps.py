from django.apps import AppConfig


class AgentsConfig(AppConfig):
    """The AI engine (agents/engine), metering (agents/usage) and the /api/v1/ai API."""

    name = "agents"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from . import error_codes  # noqa: F401  (registers the AI codes)
        from .engine import hooks

        hooks.install()
        from conversations.activity import register_listener
        from messaging import hooks as messaging_hooks

        from .runtime import binding, state

        messaging_hooks.register_inbound_listener(binding.on_inbound)
        register_listener(state.sync)
