"""Public identifiers: `<prefix>_<ULID>` strings (0-conventions.md section 3).

ULIDs sort by creation time, so ordering by id is ordering by creation: lists use the id
as their keyset and never expose sequential integers.
"""

from __future__ import annotations

import os
import threading
import time

from django.db import models

_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


_lock = threading.Lock()
_last = [0, 0]  # milliseconds and random part of the last id made in this process
_MONOTONIC_WINDOW_MS = 1000


def ulid() -> str:
    """A 26-character ULID: 48 bits of milliseconds then 80 random bits, Crockford base32.

    Monotonic within a process: ids made in the same millisecond increment the random
    part, so "newest first" by id is exact for rows one process creates in a burst.
    """
    millis = int(time.time() * 1000)
    with _lock:
        # Within the same millisecond (or a clock a little behind the last id), keep
        # counting up; a clock far behind (a test's travel back from the future, a large
        # step) starts afresh rather than stamping every later id with that old future.
        if _last[0] - _MONOTONIC_WINDOW_MS < millis <= _last[0]:
            millis, randomness = _last[0], (_last[1] + 1) & ((1 << 80) - 1)
        else:
            randomness = int.from_bytes(os.urandom(10), "big")
        _last[0], _last[1] = millis, randomness
    value = (millis << 80) | randomness
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
