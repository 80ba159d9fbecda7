"""Reads on stored files outside a tenant-scoped API view."""

from __future__ import annotations

from .models import StoredFile


def file_for_download(file_id: str) -> StoredFile | None:
    """The file a verified signed URL names. The signature, not a credential, grants access,
    so this read is explicitly unscoped; files of a deactivated organization are not served.
    """
    return (
        StoredFile.objects.dangerously_unscoped()
        .filter(pk=file_id, organization__is_active=True)
        .first()
    )
