"""`Idempotency-Key` on POST (0-conventions.md section 6).

The same key with the same request within 24 hours returns the first answer byte for
byte (with `Idempotent-Replayed: true`); with a different request, 409
`IDEMPOTENCY_CONFLICT`; while the first is still running, 409 `IDEMPOTENCY_IN_PROGRESS`.
Server errors (5xx) are not kept, so the client may retry them.
"""

from __future__ import annotations

import hashlib
from datetime import timedelta

from django.conf import settings
from django.db import IntegrityError, transaction
from django.http import HttpResponse
from django.utils import timezone

from platform_core.crypto import fernet
from platform_core.errors import APIError, validation_error

from .models import IdempotencyRecord

HEADER = "HTTP_IDEMPOTENCY_KEY"
_KEPT_HEADERS = ("Location", "Content-Type")


class Replay(Exception):
    """Raised from `initial()` to answer with the stored response."""

    def __init__(self, response: HttpResponse) -> None:
        self.response = response


def _fingerprint(request) -> str:
    digest = hashlib.sha256(f"{request.method} {request.path}\n".encode())
    content_type = request.META.get("CONTENT_TYPE", "")
    if content_type.startswith("multipart/"):
        # Boundaries differ per request: fingerprint the parsed fields and files instead.
        for key in sorted(request.data.keys()):
            for value in request.data.getlist(key):
                size = getattr(value, "size", None)
                token = f"file:{value.name}:{size}" if size is not None else str(value)
                digest.update(f"{key}={token}\n".encode())
    else:
        digest.update(request.body)
    return digest.hexdigest()


def begin(request, organization) -> IdempotencyRecord | None:
    key = request.META.get(HEADER)
    if not key or request.method != "POST":
        return None
    if len(key) > 255:
        raise validation_error(
            "Idempotency-Key", "Idempotency-Key is at most 255 characters.", status=400
        )
    fingerprint = _fingerprint(request)
    records = IdempotencyRecord.objects.for_organization(organization)
    try:
        with transaction.atomic():
            return records.create(organization=organization, key=key, fingerprint=fingerprint)
    except IntegrityError:
        pass
    record = records.filter(key=key).first()
    if record is None:  # deleted in between (a 5xx of the first request): try once more
        return begin(request, organization)
    if record.created_at < timezone.now() - timedelta(seconds=settings.IDEMPOTENCY_TTL_SECONDS):
        record.delete()
        return begin(request, organization)
    if record.fingerprint != fingerprint:
        raise APIError("IDEMPOTENCY_CONFLICT")
    if record.status_code is None:
        raise APIError("IDEMPOTENCY_IN_PROGRESS")
    # Bodies are kept encrypted: a first answer may carry a secret shown once (a new key).
    body = fernet().decrypt(bytes(record.body)) if record.body else b""
    response = HttpResponse(body, status=record.status_code, content_type=record.content_type)
    for name, value in record.headers.items():
        response[name] = value
    response["Idempotent-Replayed"] = "true"
    raise Replay(response)


def finish(record: IdempotencyRecord, response) -> None:
    if response.status_code >= 500:
        IdempotencyRecord.objects.dangerously_unscoped().filter(pk=record.pk).delete()
        return
    if hasattr(response, "render") and not getattr(response, "is_rendered", True):
        response.render()
    IdempotencyRecord.objects.dangerously_unscoped().filter(pk=record.pk).update(
        status_code=response.status_code,
        content_type=response.get("Content-Type", "application/json"),
        body=fernet().encrypt(bytes(response.content)),
        headers={h: response[h] for h in _KEPT_HEADERS if response.has_header(h)},
    )


def abandon(record: IdempotencyRecord) -> None:
    IdempotencyRecord.objects.dangerously_unscoped().filter(pk=record.pk).delete()
