"""Magic links: a signed, single-use sign-in link instead of a code (channel `magic_link`).

The link is the send's `link_url` with `token=<token>` added. The token is signed with the
deployment's key (`django.core.signing`, salt of its own) and names the verification and a
random nonce; only the nonce's keyed hash is stored (`codes.digest`, like a code). The
application that receives the click posts the token to `POST /verify/check {token}`: a
forged or altered token answers 400 `VERIFY_LINK_INVALID` without touching any row; a
genuine one is checked like a code (once: it is spent when the verification is verified,
and refused after expiry, cancel or a newer send).
"""

from __future__ import annotations

import secrets
from urllib.parse import urlsplit, urlunsplit

from django.core import signing

from platform_core.errors import APIError

_SALT = "verify.magic_link"


def new_nonce() -> str:
    return secrets.token_urlsafe(24)


def sign(verification_id: str, nonce: str) -> str:
    return signing.dumps([verification_id, nonce], salt=_SALT)


def unsign(token: str) -> tuple[str, str]:
    """(verification_id, nonce) of a genuine token; 400 VERIFY_LINK_INVALID otherwise."""
    try:
        value = signing.loads(token, salt=_SALT)
    except signing.BadSignature:
        value = None
    if (not isinstance(value, list) or len(value) != 2
            or not all(isinstance(v, str) and v for v in value)):
        raise APIError("VERIFY_LINK_INVALID", details={"field": "token"})
    return value[0], value[1]


def link(base_url: str, token: str) -> str:
    parts = urlsplit(base_url)
    query = f"{parts.query}&token={token}" if parts.query else f"token={token}"
    return urlunsplit((parts.scheme, parts.netloc, parts.path, query, parts.fragment))


def check_url(value: str) -> str:
    """An absolute http(s) URL without a fragment-only form; raises ValueError."""
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.hostname or len(value) > 1500:
        raise ValueError("link_url must be an absolute http(s) URL (at most 1500 characters).")
    return value
