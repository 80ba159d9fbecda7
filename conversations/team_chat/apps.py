from django.apps import AppConfig


class TeamChatConfig(AppConfig):
    """Team chat (Document 2, 2.6 and 4.9): channels, threads, DMs, search, presence,
    huddles and live updates over a WebSocket. Separate from customer conversations."""

    name = "conversations.team_chat"
    label = "team_chat"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from . import error_codes  # noqa: F401  (registers the team-chat codes)
