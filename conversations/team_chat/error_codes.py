"""Error codes of team chat (Document 2, 4.9).

NOT_FOUND, VALIDATION_ERROR, ALREADY_EXISTS and INSUFFICIENT_PERMISSIONS are the platform
core's; huddles without a media server answer the core's 503 SERVICE_UNAVAILABLE.
"""

from platform_core import errors

_CODES = [
    ("NOT_A_MEMBER", 403,
     "You are not a member of this channel; ask one of its owners or admins to add you."),
    ("CHANNEL_ROLE_REQUIRED", 403,
     "Managing this channel's members needs the owner or admin role on the channel."),
    ("TEAM_CHAT_USER_REQUIRED", 403,
     "Team chat acts as a user: use a dashboard session, or an API key created by a user "
     "who is still an active member of the organization."),
]

for _code, _status, _message in _CODES:
    errors.register(_code, _status, _message, app="team_chat")
