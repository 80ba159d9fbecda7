"""Error codes of the WhatsApp channel (Document 2, 4.5). NOT_FOUND, VALIDATION_ERROR,
INSUFFICIENT_PERMISSIONS and PROVIDER_UNAVAILABLE are the platform core's."""

from platform_core import errors

_CODES = [
    ("WHATSAPP_NOT_CONNECTED", 409,
     "No WhatsApp number is connected; connect one with POST /api/v1/whatsapp/connect."),
    ("WHATSAPP_TOKEN_EXPIRED", 409,
     "Meta refused the connection's access token (expired or revoked); connect again."),
    ("WHATSAPP_RATE_LIMITED", 429, "Meta's rate limit for this account was reached; retry later."),
    ("WHATSAPP_PERMISSION_DENIED", 403,
     "Meta refused the call: the app lacks the permission on this business asset."),
    ("WHATSAPP_REQUEST_REJECTED", 422,
     "Meta rejected the request; `details` carries Meta's code and message."),
    ("WHATSAPP_OUTSIDE_WINDOW", 422,
     "The recipient has not written in the last 24 hours: only templates can be sent."),
    ("WHATSAPP_USER_BLOCKED", 422, "The recipient is blocked on WhatsApp; unblock it first."),
    ("WHATSAPP_FLOW_NOT_DRAFT", 409, "Only a draft flow can be changed, published or deleted."),
    ("WHATSAPP_FLOW_NOT_PUBLISHED", 422, "Only a published flow can be sent."),
    ("WHATSAPP_FLOW_NO_ASSETS", 409, "Upload the flow JSON (assets) before publishing."),
    ("WHATSAPP_CALLING_DISABLED", 409,
     "Calling is disabled on this number; enable it with .../calling/enable."),
    ("WHATSAPP_CALL_PERMISSION_REQUIRED", 422,
     "The user has not granted call permission to this business."),
    ("WHATSAPP_CALL_NOT_RINGING", 409,
     "The call is not an inbound call waiting for an answer."),
    ("WHATSAPP_TEMPLATE_NOT_MARKETING", 422,
     "Marketing messages take an approved MARKETING-category WhatsApp template."),
]

for _code, _status, _message in _CODES:
    errors.register(_code, _status, _message, app="whatsapp")
