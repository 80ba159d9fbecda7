from django.apps import AppConfig


class MessageTemplatesConfig(AppConfig):
    # The label must not read "templates": that name is Django's template directory.
    name = "templates"
    label = "message_templates"
    verbose_name = "Message templates"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from platform_core.events.bus import register_fanout

        from . import error_codes  # noqa: F401 - registers the family's codes
        from .counters import handle_event

        # Per-template counters from message.* events (template analytics' fallback).
        register_fanout("template_counters", handle_event)
