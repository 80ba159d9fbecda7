"""Public identifiers: `<prefix>_<ULID>` strings (0-conventions.md section 3).

ULIDs sort by creation time, so ordering by id is ordering by creation: lists use the id
as their keyset and never expose sequential integers.
"""

from __future__ import annotations

import os
import time

from django.db import models

_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


def ulid() -> str:
    """A 26-character ULID: 48 bits of milliseconds then 80 random bits, Crockford base32."""
    value = (int(time.time() * 1000) << 80) | int.from_bytes(os.urandom(10), "big")
    chars = []
    for _ in range(26):
        chars.append(_CROCKFORD[value & 31])
        value >>= 5
    return "".join(reversed(chars))


def new_id(prefix: str) -> str:
    return f"{prefix}_{ulid()}"


class _IdFactory:
    """Callable default bound to a prefix (a plain lambda cannot be serialized)."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix

    def __call__(self) -> str:
        return new_id(self.prefix)


class PublicIdField(models.CharField):
    """Primary key holding `<prefix>_<ULID>`, generated when the row is built."""

    def __init__(self, *args, prefix: str = "", **kwargs) -> None:
        self.prefix = prefix
        kwargs.setdefault("max_length", 40)
        kwargs.setdefault("primary_key", True)
        kwargs.setdefault("editable", False)
        kwargs["default"] = _IdFactory(prefix)
        super().__init__(*args, **kwargs)

    def deconstruct(self):
        name, path, args, kwargs = super().deconstruct()
        kwargs.pop("default", None)
        kwargs["prefix"] = self.prefix
        return name, path, args, kwargs
