"""Secrets at rest: a model field encrypted with MultiFernet (FIELD_ENCRYPTION_KEY list).

The first key encrypts; every key decrypts, so keys rotate by prepending a new one and
re-saving rows (`rotate_encrypted_fields`). Values never appear in clear in the database.
"""

from __future__ import annotations

from functools import lru_cache

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from django.conf import settings
from django.db import models


@lru_cache(maxsize=4)
def _fernet(keys: tuple[str, ...]) -> MultiFernet:
    return MultiFernet([Fernet(k.encode() if isinstance(k, str) else k) for k in keys])


def fernet() -> MultiFernet:
    return _fernet(tuple(settings.FIELD_ENCRYPTION_KEYS))


def encrypt(value: str) -> str:
    return fernet().encrypt(value.encode()).decode()


def decrypt(token: str) -> str:
    try:
        return fernet().decrypt(token.encode()).decode()
    except InvalidToken as exc:
        raise ValueError("encrypted value cannot be decrypted with the configured keys") from exc


class EncryptedTextField(models.TextField):
    """Stores `encrypt(value)`; reads back the clear text. Empty string and None stay as is."""

    def get_prep_value(self, value):
        value = super().get_prep_value(value)
        if value in (None, ""):
            return value
        return encrypt(value)

    def from_db_value(self, value, expression, connection):
        if value in (None, ""):
            return value
        return decrypt(value)

    def rotate(self, value: str) -> str:
        return fernet().rotate(value.encode()).decode()
