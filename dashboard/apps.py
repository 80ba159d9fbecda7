from django.apps import AppConfig


class DashboardConfig(AppConfig):
    """The dashboard: the server-rendered web app (Django templates + htmx) that members of
    an organization sign into. Views call the same services and selectors as the API."""

    name = "dashboard"
    default_auto_field = "django.db.models.BigAutoField"
