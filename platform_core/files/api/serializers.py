"""Shapes of the files family (Document 2, 2.7)."""

from __future__ import annotations

from rest_framework import serializers

from platform_core.files.models import StoredFile
from platform_core.files.signed_urls import DEFAULT_TTL_MS, signed_url


class FileUploadSerializer(serializers.Serializer):
    file = serializers.FileField(help_text="The file, at most 25 MB.")
    purpose = serializers.CharField(
        max_length=100,
        help_text="Free text naming what the file is for, e.g. `mms_attachment`, `loa`, "
        "`kb_document`.",
    )


class SignedURLSerializer(serializers.Serializer):
    url = serializers.CharField(help_text="Signed download URL.")
    expires_at = serializers.DateTimeField(help_text="When the URL stops working (UTC).")
    ttl_ms = serializers.IntegerField(help_text="Effective lifetime in ms, after clamping.")


class StoredFileSerializer(serializers.ModelSerializer):
    """Metadata plus a signed download URL (lifetime from context `ttl_ms`, default 1 hour)."""

    url = serializers.CharField(read_only=True, help_text="Signed download URL.")
    expires_at = serializers.DateTimeField(read_only=True, help_text="When `url` expires (UTC).")
    ttl_ms = serializers.IntegerField(read_only=True, help_text="Lifetime of `url` in ms.")

    class Meta:
        model = StoredFile
        fields = ["id", "purpose", "filename", "content_type", "size", "sha256", "created_by",
                  "created_at", "url", "expires_at", "ttl_ms"]
        read_only_fields = fields

    def to_representation(self, instance):
        data = super().to_representation(instance)
        signed = signed_url(instance, ttl_ms=self.context.get("ttl_ms", DEFAULT_TTL_MS))
        data.update(SignedURLSerializer(signed).data)
        return data
