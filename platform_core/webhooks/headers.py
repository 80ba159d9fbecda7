"""Header rules of webhook deliveries: redaction (Document 1, 6.1) and custom headers.

Redaction: the value of a secret-bearing header is replaced by `<redacted>`, the name is
kept, names match case-insensitively: Authorization, Proxy-Authorization, Cookie,
X-Api-Key, X-Auth-Token, X-CSRF-Token, X-Amz-Security-Token and any `X-*-Secret`,
`X-*-Token`, `X-*-Key`. The signature headers are deliberately not redacted. Redaction is
irreversible: the stored delivery record never holds the clear value.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

REDACTED = "<redacted>"

_SECRET_NAMES = frozenset({
    "authorization", "proxy-authorization", "cookie", "x-api-key", "x-auth-token",
    "x-csrf-token", "x-amz-security-token",
})
_SECRET_PATTERN = re.compile(r"^x-.+-(secret|token|key)$", re.IGNORECASE)

# Headers the platform sets on every delivery (or the HTTP layer owns): a custom header
# may not replace them.
RESERVED = frozenset({
    "host", "content-type", "content-length", "transfer-encoding", "connection",
    "keep-alive", "te", "trailer", "upgrade", "expect", "user-agent", "accept-encoding",
    "x-service-event-type", "x-service-delivery-id", "x-service-timestamp",
    "x-service-signature", "x-orbit-signature", "webhook-id", "webhook-timestamp",
    "webhook-signature",
})
_TOKEN = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
MAX_CUSTOM_HEADERS = 20
MAX_VALUE_LENGTH = 4096


def is_secret_header(name: str) -> bool:
    lowered = name.strip().lower()
    return lowered in _SECRET_NAMES or bool(_SECRET_PATTERN.match(lowered))


def redact(headers: Mapping[str, str] | Iterable[tuple[str, str]]) -> dict[str, str]:
    """A copy with secret-bearing values replaced by `<redacted>` (repeated names joined)."""
    items = headers.items() if isinstance(headers, Mapping) else headers
    out: dict[str, str] = {}
    for name, value in items:
        shown = REDACTED if is_secret_header(name) else value
        if name in out and shown != REDACTED:
            out[name] = f"{out[name]}, {shown}"
        else:
            out[name] = shown
    return out


def response_headers(items: Iterable[tuple[str, str]]) -> dict[str, str]:
    """Receiver headers as stored: every header but Set-Cookie, repeated names joined."""
    out: dict[str, str] = {}
    for name, value in items:
        if name.lower() in ("set-cookie", "set-cookie2"):
            continue
        out[name] = f"{out[name]}, {value}" if name in out else value
    return out


def validate_custom(headers: Mapping[str, object]) -> dict[str, str]:
    """Check custom delivery headers; raise ValueError naming the problem."""
    if not isinstance(headers, Mapping):
        raise ValueError("headers must be an object of header names to string values.")
    if len(headers) > MAX_CUSTOM_HEADERS:
        raise ValueError(f"At most {MAX_CUSTOM_HEADERS} custom headers are allowed.")
    seen: set[str] = set()
    clean: dict[str, str] = {}
    for name, value in headers.items():
        if not isinstance(name, str) or not _TOKEN.match(name) or len(name) > 100:
            raise ValueError(f"{name!r} is not a valid header name.")
        lowered = name.lower()
        if lowered in RESERVED:
            raise ValueError(f"{name} is set by the platform and cannot be overridden.")
        if lowered in seen:
            raise ValueError(f"{name} is given twice.")
        seen.add(lowered)
        if not isinstance(value, str):
            raise ValueError(f"The value of {name} must be a string.")
        if any(c in value for c in "\r\n\x00") or len(value) > MAX_VALUE_LENGTH:
            raise ValueError(f"The value of {name} is not a valid header value.")
        clean[name] = value
    return clean


def merge_keeping_redacted(new: Mapping[str, str], old: Mapping[str, str]) -> dict[str, str]:
    """Apply an update where a `<redacted>` value means "keep the stored secret"."""
    old_by_name = {k.lower(): v for k, v in old.items()}
    merged: dict[str, str] = {}
    for name, value in new.items():
        if value == REDACTED:
            if name.lower() not in old_by_name:
                raise ValueError(f"{name} has no stored value to keep; send the real value.")
            merged[name] = old_by_name[name.lower()]
        else:
            merged[name] = value
    return merged
