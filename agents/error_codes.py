"""Error codes of the AI engine and the AI utility API (Document 3, 4.2 and 8)."""

from platform_core import errors

_CODES = [
    ("AI_BUDGET_EXCEEDED", 402,
     "This call would take the organization's AI spend past its daily or monthly cap "
     "(details.cap); the model was not called. Raise the cap or wait for the next period."),
    ("AI_UPSTREAM_ERROR", 502,
     "The model upstream refused or failed the request; details.upstream_status has its "
     "status."),
]

for _code, _status, _message in _CODES:
    errors.register(_code, _status, _message, app="agents")
