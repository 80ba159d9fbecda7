"""Error codes of the segments family (Document 2, 4.2)."""

from platform_core.errors import register

register(
    "AI_PARSE_FAILED", 422,
    "The description could not be turned into a segment filter; rephrase it.",
    app="segments",
)
register(
    "AI_SUGGEST_FAILED", 502,
    "The suggestion engine failed; try again later.",
    app="segments",
)
