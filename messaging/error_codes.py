"""Error codes of the messaging family (Document 1, section 7; 0-conventions.md section 6).

INVALID_PHONE_NUMBER and INVALID_EMAIL are the contacts family's (imported first so they
are registered under that app); PROVIDER_NOT_WIRED, CONFLICT and VALIDATION_ERROR are the
platform core's. A code some other family registered already is left as it is.
"""

import contacts.error_codes  # noqa: F401 - INVALID_PHONE_NUMBER, INVALID_EMAIL
from platform_core import errors

_CODES = [
    ("INVALID_FROM_NUMBER", 422,
     "The sender (`from`) is not a valid address for this channel."),
    ("INVALID_TEMPLATE", 422,
     "The template does not exist for this channel and language, is not approved, or its "
     "variables do not match."),
    ("MISSING_REQUIRED_FIELD", 422, "A required field is missing."),
    ("MMS_NANP_ONLY", 422,
     "MMS can only be sent to North American (+1) numbers; send the media link over SMS "
     "or use another channel."),
    ("RECIPIENT_OPTED_OUT", 422,
     "The recipient opted out of messages from this sender (STOP); they can opt back in "
     "by replying START."),
]

for code, status, message in _CODES:
    try:
        errors.get(code)
    except KeyError:
        errors.register(code, status, message, app="messaging")
