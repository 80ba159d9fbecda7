"""Replay protection: a webhook's own timestamps must fall inside the accepted window.

Document 1, section 5 rule 10: a missing or out-of-window timestamp answers 401
STALE_WEBHOOK. The window is `INBOUND_WEBHOOK_TOLERANCE_SECONDS` either side of now
(default 300 s). Which timestamps count, per provider:

- WhatsApp Cloud API: every `messages[]` and `statuses[]` item carries `timestamp` (unix
  seconds, covered by the body signature); each item we act on must have one, and the
  newest must be inside the window.
- RCS Business Messaging: the signed `sendTime` (RFC 3339) of the message or event.
- Twilio signs no timestamp, so the rule has nothing to read there: Twilio requests are
  never answered STALE_WEBHOOK. Replays are harmless instead: inbound messages are
  deduplicated on the MessageSid and status receipts never move a message backwards.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from datetime import UTC, datetime

from django.conf import settings
from django.utils import timezone

from platform_core.api.serialization import iso_utc
from platform_core.errors import APIError

DEFAULT_TOLERANCE_SECONDS = 300


def tolerance_seconds() -> int:
    return int(getattr(settings, "INBOUND_WEBHOOK_TOLERANCE_SECONDS", DEFAULT_TOLERANCE_SECONDS))


def parse_unix(value) -> datetime | None:
    try:
        return datetime.fromtimestamp(int(str(value).strip()), UTC)
    except (TypeError, ValueError, OverflowError, OSError):
        return None


def parse_rfc3339(value) -> datetime | None:
    """RFC 3339 with up to nanosecond fractions (Google's form) to an aware datetime."""
    if not isinstance(value, str) or not value:
        return None
    text = value.strip().replace("Z", "+00:00").replace("z", "+00:00")
    if "." in text:
        head, _, rest = text.partition(".")
        digits = "".join(itertools.takewhile(str.isdigit, rest))
        zone = rest[len(digits):]
        text = f"{head}.{digits[:6].ljust(6, '0')}{zone}"
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return None
    return moment if moment.tzinfo else None


def require_fresh(moments: Iterable[datetime | None]) -> datetime:
    """The newest of the webhook's timestamps, or 401 STALE_WEBHOOK."""
    moments = list(moments)
    if not moments or any(m is None for m in moments):
        raise APIError("STALE_WEBHOOK", "The webhook carries no timestamp.",
                       details={"reason": "missing"})
    newest = max(moments)
    skew = abs((timezone.now() - newest).total_seconds())
    if skew > tolerance_seconds():
        raise APIError(
            "STALE_WEBHOOK", "The webhook's timestamp is outside the accepted window.",
            details={"reason": "out_of_window", "tolerance_seconds": tolerance_seconds(),
                     "timestamp": iso_utc(newest)})
    return newest
