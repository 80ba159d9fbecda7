"""Error codes of conversations (Document 1, 7; Document 2, 4.8; Document 3, 4.7)."""

from platform_core import errors

_CODES = [
    ("WEAK_IDENTITY_MATCH_REQUIRES_CONFIRMATION", 422,
     "Conversation merge whose only overlap is phone or email while contact ids "
     "contradict; repeat with confirm_weak_identity: true."),
    ("ASSIGNMENT_OFFER_STALE", 422,
     "The routing offer is no longer open (expired, replaced or already answered)."),
    ("CONVERSATION_NOT_OPEN", 409,
     "The conversation is closed, snoozed or archived; reopen it first."),
    ("OUTSIDE_CUSTOMER_SERVICE_WINDOW", 422,
     "A free-form chat-app reply outside the 24-hour customer-service window; send an "
     "approved template instead."),
    ("COBROWSE_NOT_ACTIVE", 404, "The conversation has no joinable co-browse session."),
    ("COBROWSE_UNAVAILABLE", 503, "Co-browse is not available on this deployment."),
]

for code, status, message in _CODES:
    try:
        errors.get(code)
    except KeyError:
        errors.register(code, status, message, app="conversations")
