"""Signed download URLs for stored files (Document 2, 2.7 and 4.10; limits in section 8).

The platform signs its own URLs: `GET /api/v1/files/{id}/content?expires=<unix>&signature=<hex>`
where the signature is an HMAC-SHA256 over `"<file id>:<expires>"` with a key derived from
SECRET_KEY (`salted_hmac`), so a URL cannot be retargeted at another file or stretched in
time. Verification is constant-time and also accepts SECRET_KEY_FALLBACKS, so rotating the
secret does not break URLs already handed out.

When the default storage is S3-compatible with query-string auth, the storage's own
presigned URL is returned instead (the bytes then never pass through the platform); set
`FILES_S3_PRESIGNED_URLS = False` to always use the platform route.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from urllib.parse import urlencode

from django.conf import settings
from django.core.files.storage import default_storage
from django.urls import reverse
from django.utils import timezone
from django.utils.crypto import constant_time_compare, salted_hmac
from django.utils.http import content_disposition_header

from platform_core.api.serialization import iso_utc
from platform_core.errors import APIError, validation_error

from .models import StoredFile

DEFAULT_TTL_MS = 3_600_000  # 1 hour
MIN_TTL_MS = 60_000  # 1 minute
MAX_TTL_MS = 604_800_000  # 7 days

_SALT = "platform_core.files.signed-url.v1"
_TTL = re.compile(r"[+-]?[0-9]{1,40}")
_EXPIRES = re.compile(r"[0-9]{1,12}")
_SIGNATURE = re.compile(r"[0-9a-f]{64}")


@dataclass(frozen=True)
class SignedURL:
    url: str
    expires_at: datetime
    ttl_ms: int


def clamp_ttl_ms(value: int) -> int:
    return max(MIN_TTL_MS, min(MAX_TTL_MS, value))


def parse_ttl_ms(raw: str | None) -> int:
    """The `ttl_ms` query parameter: default 1 hour, clamped to 1 minute..7 days."""
    if raw is None or raw == "":
        return DEFAULT_TTL_MS
    if not _TTL.fullmatch(raw):
        raise validation_error(
            "ttl_ms", "ttl_ms must be an integer number of milliseconds.", status=400
        )
    return clamp_ttl_ms(int(raw))


def _signature(file_id: str, expires: int, secret: str | None = None) -> str:
    return salted_hmac(_SALT, f"{file_id}:{expires}", secret=secret, algorithm="sha256").hexdigest()


def _storage_presigns(storage) -> bool:
    """True when the storage hands out its own time-limited URLs (S3 with query auth)."""
    if not getattr(settings, "FILES_S3_PRESIGNED_URLS", True):
        return False
    try:
        from storages.backends.s3 import S3Storage
    except ImportError:  # pragma: no cover - django-storages is a dependency
        return False
    if not isinstance(storage, S3Storage) or not storage.querystring_auth:
        return False
    # A custom domain without a CloudFront signer would give an unsigned URL.
    return not storage.custom_domain or storage.cloudfront_signer is not None


def signed_url(stored_file: StoredFile, *, ttl_ms: int = DEFAULT_TTL_MS) -> SignedURL:
    """A download URL for the file, valid for `ttl_ms` (already clamped by the caller)."""
    ttl_ms = clamp_ttl_ms(ttl_ms)
    now = timezone.now()
    if _storage_presigns(default_storage):
        seconds = math.ceil(ttl_ms / 1000)
        url = default_storage.url(
            stored_file.storage_name,
            parameters={
                "ResponseContentType": stored_file.content_type,
                "ResponseContentDisposition": content_disposition_header(
                    True, stored_file.filename
                ),
            },
            expire=seconds,
        )
        return SignedURL(url=url, expires_at=now + timedelta(seconds=seconds), ttl_ms=ttl_ms)
    # Round up to whole seconds: the URL lives at least `ttl_ms`.
    expires = math.ceil((now + timedelta(milliseconds=ttl_ms)).timestamp())
    query = urlencode({"expires": expires, "signature": _signature(stored_file.pk, expires)})
    path = reverse("file-content", kwargs={"pk": stored_file.pk})
    return SignedURL(
        url=f"{settings.PUBLIC_BASE_URL}{path}?{query}",
        expires_at=datetime.fromtimestamp(expires, UTC),
        ttl_ms=ttl_ms,
    )


def verify(file_id: str, *, expires: str | None, signature: str | None) -> None:
    """Raise 403 URL_SIGNATURE_INVALID or URL_EXPIRED unless the URL is genuine and current."""
    if not (expires and signature and _EXPIRES.fullmatch(expires)
            and _SIGNATURE.fullmatch(signature)):
        raise APIError("URL_SIGNATURE_INVALID")
    expires_at = int(expires)
    secrets = [settings.SECRET_KEY, *getattr(settings, "SECRET_KEY_FALLBACKS", [])]
    genuine = False
    for secret in secrets:  # every key is tried, so timing does not tell which one matched
        genuine |= constant_time_compare(signature, _signature(file_id, expires_at, secret))
    if not genuine:
        raise APIError("URL_SIGNATURE_INVALID")
    if timezone.now().timestamp() > expires_at:
        raise APIError("URL_EXPIRED", details={
            "expired_at": iso_utc(datetime.fromtimestamp(expires_at, UTC))})
