"""Error codes of the verify family (Document 2, 4.7; Document 1, 7).

PROVIDER_NOT_WIRED, VALIDATION_ERROR, NOT_FOUND and RATE_LIMITED are the platform core's;
INVALID_PHONE_NUMBER / INVALID_EMAIL the contacts family's.
"""

from platform_core import errors

_CODES = [
    ("INVALID_RECIPIENT", 422,
     "The recipient is neither an E.164 phone number nor an email address."),
    ("VERIFICATION_EXPIRED", 410,
     "The verification expired before it was checked; start a new one."),
    ("VERIFICATION_ALREADY_VERIFIED", 409,
     "The verification was already approved; a code is accepted once."),
    ("VERIFICATION_CANCELED", 409,
     "The verification was canceled (or superseded by a newer send to the recipient)."),
    ("VERIFICATION_MAX_ATTEMPTS", 409,
     "Every check attempt of this verification was used; start a new one."),
    ("VERIFICATION_DELIVERY_FAILED", 409,
     "The code never reached the recipient (the message failed on every channel of its "
     "chain); start a new verification."),
    ("VERIFY_RECIPIENT_LIMIT", 429,
     "Too many verifications were sent to this recipient recently (fraud guard); retry "
     "after the time in Retry-After."),
    ("VERIFY_PREFIX_LIMIT", 429,
     "Too many verifications were sent to this destination prefix recently (fraud guard)."),
    ("VERIFY_PREFIX_BLOCKED", 403,
     "Sends to this destination prefix are blocked: its verification conversion rate "
     "collapsed (SMS pumping protection). Ask support to review the prefix."),
    ("VERIFY_USE_FACTOR_ENDPOINT", 422,
     "This channel is a factor: use the factor endpoints (/api/v1/verify/factors/...)."),
    ("TOTP_CODE_REPLAYED", 409,
     "This TOTP code (or an earlier one) was already used; wait for the next code."),
    ("VERIFY_LINK_INVALID", 400,
     "The magic-link token is not one this platform signed (altered, truncated or forged)."),
    ("VERIFY_BULK_ALL_FAILED", 400,
     "Every recipient of the bulk request failed; error.details.results has each row."),
]

for _code, _status, _message in _CODES:
    errors.register(_code, _status, _message, app="verify")
