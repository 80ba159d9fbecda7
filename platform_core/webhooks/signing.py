"""Signing of webhook deliveries (0-conventions.md section 4; Document 1, 5 rule 11).

The secret is `whsec_` + base64 of 32 random bytes, the shape the Standard Webhooks
specification uses, so `standardwebhooks.Webhook(secret).verify(body, headers)` works as is.

- `X-Service-Signature: t=<ts>,v1=<hex HMAC-SHA256(secret, "<ts>.<raw body>")>`, where the
  HMAC key is the secret string exactly as shown to the customer (UTF-8 bytes of
  `whsec_...`); the legacy `X-Orbit-Signature` carries the same value.
- Standard Webhooks: `webhook-id` (the event id, stable across retries),
  `webhook-timestamp` (the same seconds) and `webhook-signature: v1,<base64 HMAC-SHA256(
  base64-decoded secret body, "<webhook-id>.<ts>.<raw body>")>`.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets

PREFIX = "whsec_"


def generate_secret() -> str:
    return PREFIX + base64.b64encode(secrets.token_bytes(32)).decode("ascii")


def service_signature(secret: str, timestamp: int, body: bytes) -> str:
    mac = hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256)
    return f"t={timestamp},v1={mac.hexdigest()}"


def standard_signature(secret: str, msg_id: str, timestamp: int, body: bytes) -> str:
    key = base64.b64decode(secret.removeprefix(PREFIX))
    mac = hmac.new(key, f"{msg_id}.{timestamp}.".encode() + body, hashlib.sha256)
    return "v1," + base64.b64encode(mac.digest()).decode("ascii")


def verify_service_signature(secret: str, header: str, body: bytes, *,
                             tolerance: int | None = 300, now: int | None = None) -> bool:
    """Verify an `X-Service-Signature` value (what a receiver does; used by the tests)."""
    import time

    try:
        fields = dict(part.split("=", 1) for part in header.split(","))
        timestamp = int(fields["t"])
    except (ValueError, KeyError):
        return False
    if tolerance is not None and abs((now or int(time.time())) - timestamp) > tolerance:
        return False
    expected = service_signature(secret, timestamp, body).split("v1=", 1)[1]
    return hmac.compare_digest(expected, fields.get("v1", ""))


def signature_headers(*, secret: str, event_id: str, timestamp: int, body: bytes) -> dict[str, str]:
    signature = service_signature(secret, timestamp, body)
    return {
        "X-Service-Timestamp": str(timestamp),
        "X-Service-Signature": signature,
        "X-Orbit-Signature": signature,
        "webhook-id": event_id,
        "webhook-timestamp": str(timestamp),
        "webhook-signature": standard_signature(secret, event_id, timestamp, body),
    }
