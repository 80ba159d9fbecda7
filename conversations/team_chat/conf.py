"""Team-chat settings (Django settings, each with a default).

| Setting (default) | Meaning |
|---|---|
| `TEAM_CHAT_PAGE_DEFAULT` (50) / `TEAM_CHAT_PAGE_MAX` (200) | history page size (Document 2, 8) |
| `TEAM_CHAT_UNREAD_CAP` (99) | unread counts stop counting here (`99` reads "99 or more") |
| `TEAM_CHAT_PRESENCE_TTL_SECONDS` (60) | a user is offline this long after their last heartbeat |
| `TEAM_CHAT_PRESENCE_REDIS_URL` (`REDIS_URL`) | where presence lives; empty: in this process |
| `TEAM_CHAT_MEDIA_URL`, `TEAM_CHAT_MEDIA_API_KEY`, `TEAM_CHAT_MEDIA_API_SECRET` | the LiveKit-compatible media server of huddles; unset: huddles answer 503 |
| `TEAM_CHAT_MEDIA_TOKEN_TTL_SECONDS` (3600) | lifetime of a huddle media token |
"""

from __future__ import annotations

from django.conf import settings


def page_default() -> int:
    return int(getattr(settings, "TEAM_CHAT_PAGE_DEFAULT", 50))


def page_max() -> int:
    return int(getattr(settings, "TEAM_CHAT_PAGE_MAX", 200))


def unread_cap() -> int:
    return int(getattr(settings, "TEAM_CHAT_UNREAD_CAP", 99))


def presence_ttl() -> int:
    return int(getattr(settings, "TEAM_CHAT_PRESENCE_TTL_SECONDS", 60))


def presence_redis_url() -> str:
    return getattr(settings, "TEAM_CHAT_PRESENCE_REDIS_URL", None) or settings.REDIS_URL


def media() -> tuple[str, str, str]:
    return (getattr(settings, "TEAM_CHAT_MEDIA_URL", ""),
            getattr(settings, "TEAM_CHAT_MEDIA_API_KEY", ""),
            getattr(settings, "TEAM_CHAT_MEDIA_API_SECRET", ""))


def media_token_ttl() -> int:
    return int(getattr(settings, "TEAM_CHAT_MEDIA_TOKEN_TTL_SECONDS", 3600))
