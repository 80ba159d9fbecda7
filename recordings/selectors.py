"""Reads on recordings: integrity status, chain verification, export digest."""

from __future__ import annotations

from typing import Any

from django.utils import timezone

from platform_core.errors import APIError

from . import chain, conf, media
from .keys import MediaTampered
from .models import Recording, RecordingSeal


def seal_of(recording: Recording) -> RecordingSeal | None:
    return RecordingSeal.objects.filter(recording=recording).first()


def verify(recording: Recording) -> dict[str, Any]:
    """Re-hash the stored media and walk the chain up to this recording's seal."""
    result: dict[str, Any] = {"recording_id": recording.pk, "sealed": False, "valid": False,
                              "reason": "not_sealed", "current_hash": None,
                              "expected_hash": None}
    link = seal_of(recording)
    if link is None:
        return result
    result.update(sealed=True, current_hash=link.current_hash)
    # 1. The chain: every link from the first, in order.
    prev = chain.GENESIS
    expected = None
    links = RecordingSeal.objects.filter(organization=recording.organization,
                                         sequence__lte=link.sequence).order_by("sequence")
    for position, row in enumerate(links.iterator(chunk_size=1000), start=1):
        recomputed = chain.seal_hash(row, prev_hash=prev)
        if row.sequence != position or row.prev_hash != prev or row.current_hash != recomputed:
            if row.pk == link.pk:
                expected = recomputed
            result.update(reason="chain_broken", expected_hash=expected or recomputed,
                          broken_at_sequence=row.sequence)
            return result
        prev = row.current_hash
        expected = recomputed
    result["expected_hash"] = expected
    # 2. The media itself.
    if not recording.has_media:
        result["reason"] = "media_unavailable"
        return result
    try:
        digest = media.rehash(recording)
    except (MediaTampered, FileNotFoundError, OSError):
        result["reason"] = "media_tampered"
        return result
    if digest != link.content_sha256:
        result.update(reason="content_hash_mismatch", media_sha256=digest)
        return result
    result.update(valid=True, reason="ok")
    return result


def export_digest(recording: Recording) -> dict[str, Any]:
    link = seal_of(recording)
    if link is None:
        raise APIError("RECORDING_INTEGRITY_NOT_SEALED")
    jurisdiction = conf.setting("RECORDINGS_JURISDICTION") or \
        recording.organization.default_country
    document = {
        "format": chain.DIGEST_FORMAT,
        "recording_id": recording.pk,
        "organization_id": recording.organization_id,
        "sequence": link.sequence,
        "content_sha256": link.content_sha256,
        "prev_hash": link.prev_hash,
        "current_hash": link.current_hash,
        "canonicalization_version": link.canonicalization_version,
        "kms_provider": link.kms_provider,
        "kms_key_fingerprint": link.kms_key_fingerprint,
        "encryption_algorithm": link.encryption_algorithm,
        "jurisdiction": str(jurisdiction),
        "sealed_at": chain.timestamp(link.sealed_at),
        "timestamp": chain.timestamp(timezone.now()),
    }
    return chain.sign(document)
