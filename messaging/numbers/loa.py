"""The letter-of-authorization origin rule (Document 2, 4.4 and 4.10).

`loaFileUrl` must be a URL this platform's file endpoints issued: our public origin
(`PUBLIC_BASE_URL`: scheme, host and port), the path `/api/v1/files/{id}/content`, and
`expires` + `signature` query parameters that verify for that file id
(`platform_core.files.signed_urls.verify`: genuine and not expired), for a file of the
calling organization. Anything else, including a genuine URL of another organization's
file, answers 422 `LOA_URL_INVALID_ORIGIN` with `details.reason`.

A deployment whose storage hands out S3 presigned URLs (platform_core/files/signed_urls.py)
issues those instead of the platform route; they are not accepted here, so such a
deployment sets `FILES_S3_PRESIGNED_URLS = False` to take porting requests.
"""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlsplit

from django.conf import settings

from platform_core.errors import APIError
from platform_core.files.models import StoredFile
from platform_core.files.signed_urls import verify

_CONTENT_PATH = re.compile(r"/api/v1/files/(?P<file_id>fil_[0-9A-Za-z]{1,40})/content")
_DEFAULT_PORTS = {"http": 80, "https": 443}
FIELD = "loaFileUrl"


def _origin(url: str) -> tuple[str, str, int | None]:
    parts = urlsplit(url)
    scheme = (parts.scheme or "").lower()
    try:
        port = parts.port or _DEFAULT_PORTS.get(scheme)
    except ValueError:
        port = None
    return scheme, (parts.hostname or "").lower(), port


def _refuse(reason: str, message: str) -> APIError:
    return APIError("LOA_URL_INVALID_ORIGIN", message,
                    details={"field": FIELD, "reason": reason,
                             "issues": [{"field": FIELD, "message": message}]})


def loa_file_for_url(url: str, *, organization) -> StoredFile:
    """The organization's stored file the signed URL names, or 422 LOA_URL_INVALID_ORIGIN."""
    parts = urlsplit(url)
    if _origin(url) != _origin(settings.PUBLIC_BASE_URL) or parts.username or parts.password:
        raise _refuse("origin", "The URL must be issued by this platform's file upload "
                                f"({settings.PUBLIC_BASE_URL}/api/v1/files/...).")
    base_path = urlsplit(settings.PUBLIC_BASE_URL).path.rstrip("/")
    path = parts.path[len(base_path):] if base_path and parts.path.startswith(base_path) \
        else parts.path
    match = _CONTENT_PATH.fullmatch(path)
    if match is None or parts.fragment:
        raise _refuse("path", "The URL must be a file download URL "
                              "(/api/v1/files/{id}/content) from the file upload.")
    query = parse_qs(parts.query, keep_blank_values=True)
    expires, signature = query.get("expires", [None]), query.get("signature", [None])
    if len(expires) != 1 or len(signature) != 1:
        raise _refuse("signature", "The URL's signature is missing or not valid.")
    file_id = match["file_id"]
    try:
        verify(file_id, expires=expires[0], signature=signature[0])
    except APIError as exc:
        if exc.code == "URL_EXPIRED":
            raise _refuse("expired", "The URL has expired; upload again or presign a fresh "
                                     "URL (GET /api/v1/files/{id}/presign).") from None
        raise _refuse("signature", "The URL's signature is missing or not valid.") from None
    stored = StoredFile.objects.for_organization(organization).filter(pk=file_id).first()
    if stored is None:  # genuine, but another organization's file (or deleted)
        raise _refuse("file", "The URL does not name a file of your organization.")
    return stored
