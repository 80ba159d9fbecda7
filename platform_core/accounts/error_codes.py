"""Error codes of account security (Document 1, 3.2 and 4.1)."""

from platform_core.errors import register

_CODES = [
    (
        "INVALID_RESET_TOKEN",
        400,
        "This password-reset link is not valid, has expired or was already used; "
        "ask for a new one.",
    ),
    (
        "INVALID_REVOKE_TOKEN",
        400,
        "This revoke-API-keys link is not valid, has expired or was already used.",
    ),
    # One answer for expired, ended, replayed and forged tokens (Document 1, 3.2).
    ("INVALID_IMPERSONATION_TOKEN", 401, "The impersonation token is not valid."),
]

for code, status, message in _CODES:
    register(code, status, message, app="accounts")
