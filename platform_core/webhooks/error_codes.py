"""Error codes of the webhooks family (Document 1, 3.1 and 4.4)."""

from platform_core.errors import register

register(
    "REPLAY_WINDOW_EXPIRED", 422,
    "The delivery failed more than 7 days ago; it can no longer be replayed.",
    app="webhooks",
)
