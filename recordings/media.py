"""Recording media in storage: encrypted while it streams in, hashed on the plaintext.

The objects live in Django's default storage (the filesystem under MEDIA_ROOT or the
S3-compatible bucket that platform_core/files uses), under `recordings/<org>/<id>.enc`.
"""

from __future__ import annotations

import hashlib
import logging
import tempfile
from collections.abc import Iterable, Iterator

from django.core.files import File
from django.core.files.storage import default_storage

from . import keys

logger = logging.getLogger("recordings")


class _Hashing:
    def __init__(self, chunks: Iterable[bytes]) -> None:
        self._chunks = chunks
        self.sha256 = hashlib.sha256()
        self.size = 0

    def __iter__(self) -> Iterator[bytes]:
        for chunk in self._chunks:
            self.sha256.update(chunk)
            self.size += len(chunk)
            yield chunk


def store(recording, chunks: Iterable[bytes]) -> tuple[str, int]:
    """Encrypt `chunks` under a fresh data key into storage; fill the recording's key
    fields and storage name. Answers (plaintext sha256, plaintext size)."""
    provider = keys.key_provider()
    data_key = provider.new_data_key()
    hashing = _Hashing(chunks)
    with tempfile.SpooledTemporaryFile(max_size=8 * 1024 * 1024) as spool:
        for block in keys.encrypt_chunks(data_key.plaintext, recording.pk, hashing):
            spool.write(block)
        spool.seek(0)
        name = f"recordings/{recording.organization_id}/{recording.pk}.enc"
        recording.storage_name = default_storage.save(name, File(spool, name=name))
    recording.wrapped_key = data_key.wrapped
    recording.key_ref = data_key.key_ref
    recording.kms_provider = provider.name
    recording.kms_key_fingerprint = provider.fingerprint()
    recording.encryption_algorithm = keys.ALGORITHM
    return hashing.sha256.hexdigest(), hashing.size


def plaintext(recording) -> Iterator[bytes]:
    """The decrypted media as a stream; MediaTampered when it was changed."""
    provider = keys.key_provider()
    key = provider.unwrap(recording.wrapped_key, recording.key_ref)
    handle = default_storage.open(recording.storage_name, "rb")
    try:
        yield from keys.decrypt_stream(key, recording.pk, handle.read)
    finally:
        handle.close()


def rehash(recording) -> str:
    """SHA-256 of the decrypted media (raises MediaTampered / FileNotFoundError)."""
    digest = hashlib.sha256()
    for chunk in plaintext(recording):
        digest.update(chunk)
    return digest.hexdigest()


def delete(name: str) -> None:
    if not name:
        return
    try:
        default_storage.delete(name)
    except Exception:  # the row is gone either way; an orphan object is only logged
        logger.exception("could not delete recording object %s", name)
