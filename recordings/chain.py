"""The organization's seal chain and the export digest (Document 3, 2.4 and 4.6).

Canonical form, version `v1` (UTF-8, lines joined by a single `\\n`, no trailing newline):

    engage-recording-seal/v1
    organization=<organization id>
    recording=<recording id>
    sequence=<1-based position in the organization's chain>
    content_sha256=<64 lowercase hex>
    prev_hash=<current_hash of the previous seal; 64 zeros for the first>
    encryption_algorithm=<text>
    kms_provider=<text>
    kms_key_fingerprint=<text>
    sealed_at=<UTC, YYYY-MM-DDTHH:MM:SS.ffffffZ>

`current_hash` = lowercase hex SHA-256 of that text. A verifier recomputes every link from
the first: each `prev_hash` must equal the previous `current_hash` and each `current_hash`
its recomputed value.

Export digest: a JSON object (fields below) plus `signature`, the lowercase hex
HMAC-SHA256, keyed with the deployment's digest key (`RECORDINGS_DIGEST_KEY`, else derived
from SECRET_KEY), over the JSON serialisation of the object without `signature`: keys
sorted, separators `,` and `:`, non-ASCII kept (`json.dumps(d, sort_keys=True,
separators=(",", ":"), ensure_ascii=False)` in Python). `key_id` is the first 16 hex
characters of SHA-256 over the key, so a verifier knows which key to use.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from datetime import UTC, datetime
from typing import Any

from django.utils.crypto import salted_hmac

from .conf import setting

VERSION = "v1"
GENESIS = "0" * 64
DIGEST_FORMAT = "engage-recording-digest/v1"


def timestamp(value: datetime) -> str:
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def canonical(*, organization_id: str, recording_id: str, sequence: int, content_sha256: str,
              prev_hash: str, encryption_algorithm: str, kms_provider: str,
              kms_key_fingerprint: str, sealed_at: datetime) -> str:
    return "\n".join([
        f"engage-recording-seal/{VERSION}",
        f"organization={organization_id}",
        f"recording={recording_id}",
        f"sequence={sequence}",
        f"content_sha256={content_sha256}",
        f"prev_hash={prev_hash}",
        f"encryption_algorithm={encryption_algorithm}",
        f"kms_provider={kms_provider}",
        f"kms_key_fingerprint={kms_key_fingerprint}",
        f"sealed_at={timestamp(sealed_at)}",
    ])


def link_hash(**fields: Any) -> str:
    return hashlib.sha256(canonical(**fields).encode()).hexdigest()


def seal_hash(seal, *, prev_hash: str | None = None) -> str:
    """The recomputed `current_hash` of a stored seal (with its own or a given prev_hash)."""
    return link_hash(
        organization_id=seal.organization_id, recording_id=seal.recording_ref,
        sequence=seal.sequence, content_sha256=seal.content_sha256,
        prev_hash=seal.prev_hash if prev_hash is None else prev_hash,
        encryption_algorithm=seal.encryption_algorithm, kms_provider=seal.kms_provider,
        kms_key_fingerprint=seal.kms_key_fingerprint, sealed_at=seal.sealed_at)


def digest_key() -> bytes:
    configured = setting("RECORDINGS_DIGEST_KEY")
    if configured:
        return str(configured).encode()
    return salted_hmac("recordings.digest-key.v1", "export-digest",
                       algorithm="sha256").hexdigest().encode()


def key_id(key: bytes) -> str:
    return hashlib.sha256(key).hexdigest()[:16]


def serialise(document: dict[str, Any]) -> bytes:
    return json.dumps(document, sort_keys=True, separators=(",", ":"),
                      ensure_ascii=False).encode()


def sign(document: dict[str, Any], key: bytes | None = None) -> dict[str, Any]:
    key = key or digest_key()
    body = {**document, "signature_algorithm": "HMAC-SHA256", "key_id": key_id(key)}
    body["signature"] = hmac.new(key, serialise(body), hashlib.sha256).hexdigest()
    return body
