"""Error codes of the templates family (Document 1, section 7; 0-conventions.md section 6).

INVALID_TEMPLATE is shared with messaging (pre-send validation): a code another family
registered already is left as it is. TEST_MODE_ONLY is the platform core's (permissions.py).
"""

from platform_core import errors

_CODES = [
    ("NO_VARIANT_FOR_CHANNEL", 422,
     "A content template has no variant for the target channel and no fallback resolves."),
    ("INVALID_TEMPLATE", 422,
     "The template does not exist for this channel and language, is not approved, or its "
     "variables do not match."),
    ("INVALID_SIGNATURE", 401, "The request signature is missing or does not match."),
    ("WEBHOOK_VERIFICATION_FAILED", 403,
     "The webhook subscription verification token does not match."),
]

for code, status, message in _CODES:
    try:
        errors.get(code)
    except KeyError:
        errors.register(code, status, message, app="message_templates")
