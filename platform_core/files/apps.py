from django.apps import AppConfig


class FilesConfig(AppConfig):
    name = "platform_core.files"
    label = "files"
    default_auto_field = "django.db.models.BigAutoField"
