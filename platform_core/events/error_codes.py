"""Error codes of the events family (Document 1, 6.3 and 7)."""

from platform_core.errors import register

register(
    "EVENT_PAYLOAD_TOO_LARGE", 413,
    "The event's serialized properties are larger than 1 MiB (1,048,576 bytes).",
    app="events",
)
