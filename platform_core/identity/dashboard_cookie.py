"""The dashboard's session cookie: one place that writes, reads and clears it.

The cookie carries the same session JWT the API takes as `Authorization: Bearer` (one
session concept: revoking the session ends both). It is HttpOnly and SameSite=Lax, Secure
unless DASHBOARD_COOKIE_SECURE is off (plain-HTTP development). WebSocket handshakes carry
it too; there the Origin must be this host, since browsers send cookies on cross-site
WebSocket handshakes and no CSRF token guards them.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from django.conf import settings
from django.http import HttpRequest, HttpResponse

COOKIE_NAME = "engage_session"


def set_session_cookie(response: HttpResponse, token: str) -> None:
    response.set_cookie(
        COOKIE_NAME,
        token,
        max_age=settings.SESSION_TOKEN_TTL_SECONDS,
        path="/",
        secure=settings.DASHBOARD_COOKIE_SECURE,
        httponly=True,
        samesite="Lax",
    )


def clear_session_cookie(response: HttpResponse) -> None:
    response.delete_cookie(COOKIE_NAME, path="/", samesite="Lax")


def token_from_request(request: HttpRequest) -> str:
    return request.COOKIES.get(COOKIE_NAME, "")


def token_from_ws_scope(scope) -> str:
    """The cookie's token from a WebSocket handshake, or "" when absent or cross-origin."""
    headers = {name.decode("latin1").lower(): value.decode("latin1")
               for name, value in scope.get("headers", [])}
    origin, host = headers.get("origin", ""), headers.get("host", "")
    if not origin or urlsplit(origin).netloc != host:
        return ""
    for part in headers.get("cookie", "").split(";"):
        name, _, value = part.strip().partition("=")
        if name == COOKIE_NAME:
            return value.strip('"')
    return ""
