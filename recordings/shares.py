"""Guest share links (Document 3, 4.6).

    <PUBLIC_BASE_URL>/api/v1/recordings/<id>/content?expires=<unix>&token=<hex>

`token` is an HMAC-SHA256 (key derived from SECRET_KEY) over the recording id, the expiry
and the recording's current `share_nonce`: revoking rotates the nonce, so every link
handed out stops at once, whatever its expiry.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from django.conf import settings
from django.utils import timezone
from django.utils.crypto import constant_time_compare, salted_hmac

MIN_SECONDS = 300
MAX_SECONDS = 30 * 24 * 3600
DEFAULT_SECONDS = 7 * 24 * 3600
_SALT = "recordings.share.v1"
_EXPIRES = re.compile(r"[0-9]{1,12}")
_TOKEN = re.compile(r"[0-9a-f]{64}")


@dataclass(frozen=True)
class ShareLink:
    url: str
    token: str
    expires_at: datetime


def clamp(seconds: int | None) -> int:
    if seconds is None:
        return DEFAULT_SECONDS
    return max(MIN_SECONDS, min(MAX_SECONDS, int(seconds)))


def _token(recording_id: str, expires: int, nonce: str, secret: str | None = None) -> str:
    return salted_hmac(_SALT, f"{recording_id}:{expires}:{nonce}", secret=secret,
                       algorithm="sha256").hexdigest()


def link(recording, seconds: int) -> ShareLink:
    expires = math.ceil((timezone.now() + timedelta(seconds=seconds)).timestamp())
    token = _token(recording.pk, expires, recording.share_nonce)
    url = (f"{settings.PUBLIC_BASE_URL}/api/v1/recordings/{recording.pk}/content"
           f"?expires={expires}&token={token}")
    return ShareLink(url=url, token=token, expires_at=datetime.fromtimestamp(expires, UTC))


def valid(recording, *, expires: str | None, token: str | None) -> bool:
    if not (expires and token and _EXPIRES.fullmatch(expires) and _TOKEN.fullmatch(token)):
        return False
    genuine = False
    for secret in [settings.SECRET_KEY, *getattr(settings, "SECRET_KEY_FALLBACKS", [])]:
        genuine |= constant_time_compare(token, _token(recording.pk, int(expires),
                                                       recording.share_nonce, secret))
    return genuine and timezone.now().timestamp() <= int(expires)
