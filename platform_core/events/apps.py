from django.apps import AppConfig


class EventsConfig(AppConfig):
    name = "platform_core.events"
    label = "events"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from . import error_codes  # noqa: F401  (registers EVENT_PAYLOAD_TOO_LARGE)
        from .bus import register_fanout
        from .fanout import feed_fanout, feed_fanout_batch, stream_fanout, stream_fanout_batch

        # The feed first: the stream handler publishes the position the feed assigned.
        register_fanout("feed", feed_fanout, batch=feed_fanout_batch)
        register_fanout("stream", stream_fanout, batch=stream_fanout_batch)
