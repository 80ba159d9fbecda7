"""Recordings tests: a private MEDIA_ROOT per test and helpers to register media."""

from __future__ import annotations

import hashlib

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

MEDIA = (b"RIFF" + bytes(range(256)) * 700)  # ~179 KB: three encryption chunks


@pytest.fixture(autouse=True)
def media_root(settings, tmp_path):
    root = tmp_path / "media"
    root.mkdir()
    settings.MEDIA_ROOT = str(root)
    return root


def upload(client, *, kind: str = "video", data: bytes = MEDIA, **extra):
    body = {"file": SimpleUploadedFile("call.wav", data, content_type="audio/wav"),
            "kind": kind, **extra}
    return client.post("/api/v1/recordings", body, format="multipart")


def sha(data: bytes = MEDIA) -> str:
    return hashlib.sha256(data).hexdigest()
