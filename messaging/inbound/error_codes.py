"""Error codes of inbound provider webhooks and test-mode injection (Document 1, section 5
rule 10 and section 7; 0-conventions.md section 6)."""

from platform_core import errors

_CODES = [
    ("INVALID_SIGNATURE", 401,
     "The webhook's signature does not verify with the provider credentials of this "
     "organization."),
    ("STALE_WEBHOOK", 401,
     "The webhook's timestamp is missing or outside the accepted window (replay protection)."),
    ("WEBHOOK_BODY_MISSING", 400,
     "The provider webhook arrived without a raw body to verify."),
    ("WEBHOOK_VERIFICATION_FAILED", 403,
     "The webhook subscription verification token does not match."),
    ("INBOUND_DROPPED", 422,
     "The message was dropped: its sender is blocked on this channel."),
]

for code, status, message in _CODES:
    try:
        errors.get(code)
    except KeyError:
        errors.register(code, status, message, app="messaging.inbound")
