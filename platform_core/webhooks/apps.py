from django.apps import AppConfig


class WebhooksConfig(AppConfig):
    name = "platform_core.webhooks"
    label = "webhooks"
    default_auto_field = "django.db.models.BigAutoField"
