from django.apps import AppConfig


class MessagingConfig(AppConfig):
    name = "messaging"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from . import error_codes  # noqa: F401 - registers the family's codes
        from .providers.registry import SANDBOX, register_provider
        from .providers.sandbox import SandboxProvider

        register_provider(SANDBOX, SandboxProvider)
        try:
            from templates.analytics import register_campaign_resolver
        except ImportError:  # pragma: no cover - the templates family is installed
            return
        from .broadcasts.selectors import campaign_info

        # Template analytics' per-campaign rows name their broadcast and its status.
        register_campaign_resolver(campaign_info)
