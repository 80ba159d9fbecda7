"""One-time codes: drawn from `secrets`, kept only as a keyed HMAC, compared in constant time."""

from __future__ import annotations

import hashlib
import hmac
import secrets

from django.conf import settings


def generate(length: int) -> str:
    return "".join(secrets.choice("0123456789") for _ in range(length))


def _key() -> bytes:
    configured = getattr(settings, "VERIFY_CODE_HMAC_KEY", "")
    if configured:
        return configured.encode()
    # A key of its own, derived from SECRET_KEY (a leaked hash column alone proves nothing).
    return hashlib.sha256(b"verify-code-hmac:" + settings.SECRET_KEY.encode()).digest()


def digest(verification_id: str, code: str) -> str:
    """The stored form of a code, bound to its verification (no cross-row lookups)."""
    return hmac.new(_key(), f"{verification_id}:{code}".encode(), hashlib.sha256).hexdigest()


def matches(verification_id: str, code: str, stored: str) -> bool:
    return bool(stored) and hmac.compare_digest(digest(verification_id, code), stored)
