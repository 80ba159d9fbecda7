"""Reads of the links family."""

from __future__ import annotations

from .models import ShortLink


def link_by_code(code: str) -> ShortLink | None:
    """The link behind a public redirect code, any organization (the code is the key)."""
    return ShortLink.objects.dangerously_unscoped().filter(code=code).first()
