"""Lifetimes, limits and link shapes of account security, with their settings overrides.

Document 1, 3.2 and 8 fix the reset link at 1 hour, the revoke-API-keys link at 24 hours
and the impersonation cookie at 5 minutes. The rest are our choices (the documents say
"not shown"); each can be overridden in settings under the name given.
"""

from __future__ import annotations

from urllib.parse import quote

from django.conf import settings

RESET_TOKEN_TTL_SECONDS = 3600
REVOKE_KEYS_TOKEN_TTL_SECONDS = 24 * 3600
IMPERSONATION_COOKIE_MAX_AGE = 300
IMPERSONATION_COOKIE_NAME = "impersonation_token"
IMPERSONATION_COOKIE_PATH = "/api/v1/auth/"


def _setting(name: str, default):
    return getattr(settings, name, default)


def impersonation_token_ttl() -> int:
    """How long an operator has to use the link (IMPERSONATION_TOKEN_TTL_SECONDS)."""
    return int(_setting("IMPERSONATION_TOKEN_TTL_SECONDS", 600))


def impersonation_session_ttl() -> int:
    """Lifetime of the session an impersonation starts (IMPERSONATION_SESSION_TTL_SECONDS)."""
    return int(_setting("IMPERSONATION_SESSION_TTL_SECONDS", 3600))


def forgot_password_limits() -> tuple[tuple[int, int], tuple[int, int]]:
    """((per-IP count, window), (per-email count, window)): FORGOT_PASSWORD_RATE_LIMITS."""
    return _setting("FORGOT_PASSWORD_RATE_LIMITS", ((20, 3600), (5, 3600)))


def public_auth_ip_limit() -> tuple[int, int]:
    """Per-IP limit on the token-taking public routes (ACCOUNT_TOKEN_RATE_LIMIT)."""
    return _setting("ACCOUNT_TOKEN_RATE_LIMIT", (30, 60))


def base_url() -> str:
    return settings.PUBLIC_BASE_URL.rstrip("/")


def dashboard_url() -> str:
    """Where the dashboard lives (DASHBOARD_URL); default PUBLIC_BASE_URL + /dashboard/."""
    return _setting("DASHBOARD_URL", "") or f"{base_url()}/dashboard/"


def password_reset_link(token: str) -> str:
    """The dashboard page that asks for the new password and posts it to /reset-password.
    PASSWORD_RESET_URL may name another page; the token is appended as `?token=`."""
    page = _setting("PASSWORD_RESET_URL", "") or f"{dashboard_url()}reset-password"
    return f"{page}?token={quote(token)}"


def revoke_api_keys_link(token: str) -> str:
    return f"{base_url()}/api/v1/auth/post-reset-revoke-api-keys?token={quote(token)}"


def impersonated_dashboard_url(session_token: str) -> str:
    """The redirect target of a consumed impersonation: the session rides in the fragment,
    which browsers never send to a server, so it stays out of logs and Referer headers."""
    return f"{dashboard_url()}#session={session_token}"
