from django.apps import AppConfig


class MessageTemplatesConfig(AppConfig):
    # The label must not read "templates": that name is Django's template directory.
    name = "templates"
    label = "message_templates"
    verbose_name = "Message templates"
    default_auto_field = "django.db.models.BigAutoField"
