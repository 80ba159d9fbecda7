"""Recording settings: Django settings first, else the environment, else the default.

| Name (default) | Meaning |
|---|---|
| `RECORDINGS_RETENTION_DAYS` (365) | age after which the beat sweep deletes an unheld recording |
| `RECORDINGS_SWEEP_BATCH` (500) | recordings deleted per sweep transaction |
| `RECORDINGS_KMS_PROVIDER` (`local`) | key provider wrapping the per-recording data keys: `local` or `aws-kms` |
| `RECORDINGS_LOCAL_KEK` (derived) | urlsafe-base64 32-byte key-encryption key of the local provider |
| `RECORDINGS_KMS_KEY_ID` | the AWS KMS key id/ARN (`aws-kms`) |
| `RECORDINGS_DIGEST_KEY` (derived) | HMAC key of the export digests |
| `RECORDINGS_JURISDICTION` (organization's `default_country`) | jurisdiction stated in digests |
| `RECORDINGS_FETCH_MAX_BYTES` (FILE_UPLOAD_MAX_BYTES) | largest `media_url` body fetched |
"""

from __future__ import annotations

import os
from typing import Any

from django.conf import settings


def setting(name: str, default: Any = None) -> Any:
    value = getattr(settings, name, None)
    if value is None:
        value = os.environ.get(name)
    return default if value in (None, "") else value


def retention_days() -> int:
    return int(setting("RECORDINGS_RETENTION_DAYS", 365))


def sweep_batch() -> int:
    return int(setting("RECORDINGS_SWEEP_BATCH", 500))
