"""Error codes of the RCS family (Document 2, 4.6). VALIDATION_ERROR, NOT_FOUND,
ALREADY_EXISTS, CONFLICT and PROVIDER_NOT_WIRED are the platform core's."""

from platform_core import errors

_CODES = [
    ("RCS_PROVIDER_ERROR", 502,
     "Google's RCS Business Messaging API refused or failed the call; error.details has "
     "its status and message."),
    ("RCS_BRAND_NOT_SUBMITTABLE", 409,
     "Only a draft or rejected brand can be submitted for carrier verification."),
    ("RCS_BRAND_IN_USE", 409, "The brand still has agents; delete them first."),
    ("RCS_AGENT_NOT_VERIFIABLE", 409,
     "The agent cannot be submitted for verification now (already pending or verified, "
     "or its brand is not verified)."),
    ("RCS_NOT_CAPABLE", 422, "The phone number cannot receive RCS messages."),
    ("RCS_CAROUSEL_TOO_SMALL", 422,
     "A carousel needs at least 2 products; error.details.found says how many matched."),
]

for _code, _status, _message in _CODES:
    errors.register(_code, _status, _message, app="rcs")
