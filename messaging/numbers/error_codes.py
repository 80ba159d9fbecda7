"""Error codes of the numbers family (Document 2, 4.4)."""

from platform_core.errors import register

register(
    "LOA_URL_INVALID_ORIGIN", 422,
    "The letter-of-authorization URL must be a current signed URL issued by this platform's "
    "file upload (POST /api/v1/files/upload) for a file of your organization.",
    app="numbers",
)
