from django.apps import AppConfig


class WebhooksConfig(AppConfig):
    name = "platform_core.webhooks"
    label = "webhooks"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from platform_core.events.bus import register_fanout

        from . import error_codes  # noqa: F401  (registers this family's codes)
        from .fanout import webhooks_fanout, webhooks_fanout_batch

        register_fanout("webhooks", webhooks_fanout, batch=webhooks_fanout_batch)
