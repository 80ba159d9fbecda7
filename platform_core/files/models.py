"""Stored files (Document 2, 2.7): the metadata row; the bytes live in Django's storage."""

from __future__ import annotations

from django.db import models

from platform_core.ids import PublicIdField
from platform_core.tenancy.models import TenantModel


class StoredFile(TenantModel):
    id = PublicIdField(prefix="fil")
    # Free text chosen by the caller, e.g. `mms_attachment`, `loa`, `kb_document`.
    purpose = models.CharField(max_length=100)
    filename = models.CharField(max_length=255)
    content_type = models.CharField(max_length=255)
    size = models.BigIntegerField(help_text="Bytes.")
    sha256 = models.CharField(max_length=64)
    storage_name = models.CharField(
        max_length=500, help_text="Name of the object in the default storage."
    )
    created_by = models.CharField(max_length=64, blank=True, help_text="Actor id of the uploader.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-id"]
        indexes = [
            models.Index(fields=["organization", "id"]),
            models.Index(fields=["organization", "purpose", "id"]),
        ]
        verbose_name = "stored file"

    def __str__(self) -> str:
        return f"{self.filename} ({self.id})"
