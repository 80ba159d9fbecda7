"""Error codes of the platform core (Document 1, section 7, and 0-conventions.md)."""

from platform_core.errors import register

_CODES = [
    # Authentication and permissions.
    ("UNAUTHORIZED", 401, "Authentication credentials were not provided or are not valid."),
    ("INVALID_API_KEY", 401, "The API key is not valid or has been revoked."),
    ("EXPIRED_TOKEN", 401, "The session token has expired or was revoked."),
    ("INVALID_CREDENTIALS", 401, "Email or password is incorrect."),
    ("INSUFFICIENT_PERMISSIONS", 403, "The credential lacks the scope or role this needs."),
    ("IP_NOT_ALLOWED", 403, "Requests with this API key are not allowed from this address."),
    ("WRONG_KEY_MODE", 403, "The key's mode (test or live) differs from the organization's."),
    ("TEST_MODE_ONLY", 403,
     "This endpoint only works in test mode (a test key on a sandbox organization)."),
    ("API_KEY_REQUIRED", 403,
     "This endpoint is API-only: call it with an API key, not a dashboard session."),
    ("CANNOT_REVOKE_CURRENT_SESSION", 400, "Use logout to end the current session."),
    # Request shape.
    ("VALIDATION_ERROR", 422, "The request is not valid."),
    ("INVALID_CURSOR", 400, "The cursor is malformed, altered or stale."),
    ("NOT_FOUND", 404, "No such resource."),
    ("METHOD_NOT_ALLOWED", 405, "This method is not allowed on this resource."),
    ("NOT_ACCEPTABLE", 406, "Cannot produce a response in the requested format."),
    ("UNSUPPORTED_MEDIA_TYPE", 415, "The request body's content type is not supported."),
    ("PAYLOAD_TOO_LARGE", 413, "The request body is too large."),
    ("FILE_TOO_LARGE", 413, "The file is larger than the upload limit (25 MB)."),
    # State.
    ("ALREADY_EXISTS", 409, "A resource with these unique values already exists."),
    ("CONFLICT", 409, "The request conflicts with the resource's current state."),
    ("IDEMPOTENCY_CONFLICT", 409, "This Idempotency-Key was used with a different request."),
    ("IDEMPOTENCY_IN_PROGRESS", 409, "A request with this Idempotency-Key is still running."),
    ("RATE_LIMITED", 429, "Too many requests; retry after the time in Retry-After."),
    # Server side.
    ("DB_ERROR", 500, "A database error occurred."),
    ("INTERNAL_ERROR", 500, "An unexpected error occurred; it has been logged."),
    ("SERVICE_UNAVAILABLE", 503, "This feature is not configured on this deployment."),
    ("PROVIDER_NOT_WIRED", 503, "No provider is configured for this channel."),
]

for code, status, message in _CODES:
    register(code, status, message, app="platform_core")
