from django.apps import AppConfig


class InsightsConfig(AppConfig):
    name = "insights"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from django.db.backends.signals import connection_created

        from .sql import register_sqlite_functions

        connection_created.connect(register_sqlite_functions,
                                   dispatch_uid="insights_sqlite_functions")
