"""Writes on stored files: upload and delete, each audited.

The bytes go to Django's default storage (the filesystem under MEDIA_ROOT, or an
S3-compatible bucket through django-storages). The storage write happens outside the
database transaction (it may be a network call); a failed row insert removes the object
again, and a deleted row removes its object once the transaction has committed.
"""

from __future__ import annotations

import hashlib
import logging
import mimetypes
import os
import re

from django.core.files.storage import default_storage
from django.core.files.uploadedfile import UploadedFile
from django.db import transaction

from platform_core.audit.services import audit_record
from platform_core.errors import validation_error
from platform_core.identity.principal import Principal

from .models import StoredFile
from .uploads import max_file_bytes, too_large_error

logger = logging.getLogger("platform_core.files")

_MIME = re.compile(r"[a-z0-9][a-z0-9!#$&^_.+-]*/[a-z0-9][a-z0-9!#$&^_.+-]*")
_CHARSET = re.compile(r"[A-Za-z0-9_.:-]{1,40}")
_EXTENSION = re.compile(r"\.[a-z0-9]{1,15}")
_FILENAME_MAX = 255


def _filename(uploaded: UploadedFile) -> str:
    name = (uploaded.name or "").strip() or "file"
    if len(name) <= _FILENAME_MAX:
        return name
    stem, ext = os.path.splitext(name)
    ext = ext if len(ext) <= 16 else ""
    return stem[: _FILENAME_MAX - len(ext)] + ext


def _content_type(uploaded: UploadedFile, filename: str) -> str:
    """The declared media type when it is well formed and specific, else a guess by name."""
    declared = (uploaded.content_type or "").split(";")[0].strip().lower()
    if not _MIME.fullmatch(declared) or len(declared) > 200:
        declared = ""
    if not declared or declared == "application/octet-stream":
        guessed, _encoding = mimetypes.guess_type(filename, strict=False)
        declared = guessed or "application/octet-stream"
    charset = getattr(uploaded, "charset", None)
    if charset and _CHARSET.fullmatch(charset) and declared.startswith("text/"):
        return f"{declared}; charset={charset.lower()}"
    return declared


def _sha256(uploaded: UploadedFile) -> str:
    """The digest computed while the upload streamed in, or one pass over the chunks."""
    digest = getattr(uploaded, "sha256", None)
    if digest:
        return digest
    running = hashlib.sha256()
    for chunk in uploaded.chunks():
        running.update(chunk)
    uploaded.seek(0)
    return running.hexdigest()


def _storage_name(stored: StoredFile) -> str:
    # No caller-chosen text in the object name, only a normalized extension.
    ext = os.path.splitext(stored.filename)[1].lower()
    suffix = ext if _EXTENSION.fullmatch(ext) else ""
    return f"files/{stored.organization_id}/{stored.pk}{suffix}"


def file_upload(
    *,
    principal: Principal,
    uploaded: UploadedFile,
    purpose: str,
    request=None,
) -> StoredFile:
    """Store the uploaded bytes and record the file; 413 FILE_TOO_LARGE above the limit."""
    if uploaded.size is not None and uploaded.size > max_file_bytes():
        raise too_large_error()
    purpose = purpose.strip()
    if not purpose:
        raise validation_error("purpose", "purpose is required.")
    filename = _filename(uploaded)
    stored = StoredFile(
        organization=principal.organization,
        purpose=purpose,
        filename=filename,
        content_type=_content_type(uploaded, filename),
        size=uploaded.size or 0,
        sha256=_sha256(uploaded),
        created_by=principal.actor_id,
    )
    stored.storage_name = default_storage.save(_storage_name(stored), uploaded)
    try:
        with transaction.atomic():
            stored.save(force_insert=True)
            audit_record(
                action="file.uploaded",
                principal=principal,
                target=stored,
                request=request,
                metadata={"purpose": purpose, "filename": filename, "size": stored.size,
                          "sha256": stored.sha256},
            )
    except BaseException:
        _delete_object(stored.storage_name)
        raise
    return stored


def file_delete(*, principal: Principal, stored_file: StoredFile, request=None) -> None:
    """Delete the record now and its stored object once the deletion has committed."""
    name = stored_file.storage_name
    with transaction.atomic():
        audit_record(
            action="file.deleted",
            principal=principal,
            target=stored_file,
            request=request,
            metadata={"purpose": stored_file.purpose, "filename": stored_file.filename,
                      "size": stored_file.size},
        )
        stored_file.delete()
        transaction.on_commit(lambda: _delete_object(name))


def _delete_object(name: str) -> None:
    try:
        default_storage.delete(name)
    except Exception:  # the row is gone either way; an orphan object is only logged
        logger.exception("could not delete stored object %s", name)
