"""Error codes of the files family (signed download URLs).

FILE_TOO_LARGE (413) is a platform-wide code registered in platform_core/error_codes.py.
"""

from platform_core.errors import register

_CODES = [
    (
        "URL_SIGNATURE_INVALID",
        403,
        "The signed URL is malformed or its signature does not match; ask for a new URL.",
    ),
    ("URL_EXPIRED", 403, "The signed URL has expired; ask for a new one with /presign."),
]

for code, status, message in _CODES:
    register(code, status, message, app="files")
