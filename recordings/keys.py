"""Envelope encryption of recording media.

Each recording gets its own 256-bit data key. The media is encrypted with it (AES-256-GCM
in 64 KiB chunks, below), and only the data key *wrapped* by the key provider is stored.
The provider is chosen by `RECORDINGS_KMS_PROVIDER`:

- `local` (default): AES key wrap (RFC 3394) under a key-encryption key from
  `RECORDINGS_LOCAL_KEK`, else one derived from the first FIELD_ENCRYPTION_KEY.
- `aws-kms`: AWS KMS `GenerateDataKey` / `Decrypt` with `RECORDINGS_KMS_KEY_ID`.

Every provider answers `(name, fingerprint)`; the fingerprint (16 bytes of SHA-256 over
the key's identity) is public, the key reference itself never leaves the service.

Chunk format (`AES-256-GCM-CHUNKED-v1`): a 4-byte magic `RCE1` and an 8-byte random
prefix, then chunks of at most 64 KiB of plaintext, each sealed with nonce
`prefix || chunk index (4 bytes, big endian)` and associated data
`recording id || index || final flag`, so chunks cannot be reordered, swapped between
recordings or cut off at the end.
"""

from __future__ import annotations

import base64
import hashlib
import os
import struct
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Protocol

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.hashes import SHA256
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from cryptography.hazmat.primitives.keywrap import InvalidUnwrap, aes_key_unwrap, aes_key_wrap
from django.conf import settings

from .conf import setting

ALGORITHM = "AES-256-GCM-CHUNKED-v1"
MAGIC = b"RCE1"
CHUNK = 64 * 1024
TAG = 16


class MediaTampered(Exception):
    """The stored ciphertext does not decrypt: a changed, cut or swapped byte."""


@dataclass(frozen=True)
class DataKey:
    plaintext: bytes
    wrapped: str  # base64 of the provider's wrapped form
    key_ref: str  # which key wrapped it (never returned by the API)


class KeyProvider(Protocol):
    name: str

    def fingerprint(self) -> str: ...

    def new_data_key(self) -> DataKey: ...

    def unwrap(self, wrapped: str, key_ref: str) -> bytes: ...


class LocalKeyProvider:
    name = "local"

    def __init__(self, kek: bytes | None = None) -> None:
        self._kek = kek or self._configured_kek()

    @staticmethod
    def _configured_kek() -> bytes:
        raw = setting("RECORDINGS_LOCAL_KEK")
        if raw:
            key = base64.urlsafe_b64decode(str(raw))
            if len(key) != 32:
                raise ValueError("RECORDINGS_LOCAL_KEK must be 32 bytes (urlsafe base64)")
            return key
        seed = settings.FIELD_ENCRYPTION_KEYS[0]
        seed = seed.encode() if isinstance(seed, str) else seed
        return HKDF(algorithm=SHA256(), length=32, salt=b"recordings.kek",
                    info=b"engage recordings local kek v1").derive(seed)

    def fingerprint(self) -> str:
        return hashlib.sha256(b"local-kek:" + self._kek).hexdigest()[:32]

    def new_data_key(self) -> DataKey:
        key = AESGCM.generate_key(bit_length=256)
        wrapped = base64.b64encode(aes_key_wrap(self._kek, key)).decode()
        return DataKey(plaintext=key, wrapped=wrapped, key_ref=f"local:{self.fingerprint()}")

    def unwrap(self, wrapped: str, key_ref: str) -> bytes:
        try:
            return aes_key_unwrap(self._kek, base64.b64decode(wrapped))
        except (InvalidUnwrap, ValueError) as exc:
            raise MediaTampered("the data key does not unwrap") from exc


class AwsKmsKeyProvider:
    """AWS KMS through boto3 (credentials from the usual AWS environment)."""

    name = "aws-kms"

    def __init__(self, key_id: str, client=None) -> None:
        self.key_id = key_id
        if client is None:
            import boto3

            client = boto3.client("kms")
        self._client = client

    def fingerprint(self) -> str:
        return hashlib.sha256(b"aws-kms:" + self.key_id.encode()).hexdigest()[:32]

    def new_data_key(self) -> DataKey:
        answer = self._client.generate_data_key(KeyId=self.key_id, KeySpec="AES_256")
        return DataKey(plaintext=answer["Plaintext"],
                       wrapped=base64.b64encode(answer["CiphertextBlob"]).decode(),
                       key_ref=str(answer.get("KeyId") or self.key_id))

    def unwrap(self, wrapped: str, key_ref: str) -> bytes:
        answer = self._client.decrypt(CiphertextBlob=base64.b64decode(wrapped), KeyId=key_ref)
        return answer["Plaintext"]


_OVERRIDE: KeyProvider | None = None


def use_provider(provider: KeyProvider | None) -> None:
    """Install a provider (tests, or a deployment's own KMS adapter)."""
    global _OVERRIDE
    _OVERRIDE = provider


def key_provider() -> KeyProvider:
    if _OVERRIDE is not None:
        return _OVERRIDE
    name = str(setting("RECORDINGS_KMS_PROVIDER", "local"))
    if name == "aws-kms":
        return AwsKmsKeyProvider(str(setting("RECORDINGS_KMS_KEY_ID", "")))
    return LocalKeyProvider()


def _aad(recording_id: str, index: int, final: bool) -> bytes:
    return recording_id.encode() + struct.pack(">I?", index, final)


def encrypt_chunks(key: bytes, recording_id: str, chunks: Iterable[bytes]) -> Iterator[bytes]:
    """The ciphertext of the plaintext `chunks` (any sizes), as a stream."""
    aead = AESGCM(key)
    prefix = os.urandom(8)
    yield MAGIC + prefix
    buffer = b""
    pending: bytes | None = None
    index = 0

    def seal(block: bytes, final: bool) -> bytes:
        return aead.encrypt(prefix + struct.pack(">I", index), block, _aad(recording_id, index,
                                                                           final))

    for chunk in chunks:
        buffer += chunk
        while len(buffer) >= CHUNK:
            if pending is not None:
                yield seal(pending, False)
                index += 1
            pending, buffer = buffer[:CHUNK], buffer[CHUNK:]
    if buffer:
        if pending is not None:
            yield seal(pending, False)
            index += 1
        pending = buffer
    yield seal(pending or b"", True)


def decrypt_stream(key: bytes, recording_id: str, read) -> Iterator[bytes]:
    """The plaintext of a stored object read with `read(n)`; MediaTampered on any change."""
    header = read(len(MAGIC) + 8)
    if len(header) != len(MAGIC) + 8 or not header.startswith(MAGIC):
        raise MediaTampered("not an encrypted recording")
    prefix = header[len(MAGIC):]
    aead = AESGCM(key)
    size = CHUNK + TAG
    index = 0
    current = read(size)
    while True:
        following = read(size)
        final = not following
        try:
            yield aead.decrypt(prefix + struct.pack(">I", index), current,
                               _aad(recording_id, index, final))
        except (InvalidTag, ValueError) as exc:
            raise MediaTampered(f"chunk {index} does not authenticate") from exc
        if final:
            return
        current, index = following, index + 1
