"""Shapes of the recordings API (Document 3, 2.4; 0-conventions section 9)."""

from __future__ import annotations

import re

from rest_framework import serializers

from recordings import shares
from recordings.models import Recording, RecordingKind

HEX64 = re.compile(r"[0-9a-fA-F]{64}")
DOWNLOAD_SECONDS = 3600


def _hex64(value: str) -> str:
    if not HEX64.fullmatch(value):
        raise serializers.ValidationError("Must be 64 hexadecimal characters (SHA-256).")
    return value.lower()


class _Common(serializers.Serializer):
    kind = serializers.ChoiceField(choices=RecordingKind.choices)
    session_id = serializers.CharField(max_length=128, required=False, allow_blank=True,
                                       help_text="Video room session / call this belongs to.")
    call_sid = serializers.CharField(max_length=128, required=False, allow_blank=True)
    duration_seconds = serializers.IntegerField(min_value=0, max_value=10**7, required=False,
                                                allow_null=True)


class RecordingUploadSerializer(_Common):
    file = serializers.FileField(help_text="The media, at most the upload limit (25 MB).")


class RecordingURLSerializer(_Common):
    media_url = serializers.URLField(max_length=2048)
    content_sha256 = serializers.CharField(required=False, allow_blank=True,
                                           validators=[_hex64])
    metadata = serializers.DictField(required=False)

    def validate_metadata(self, value: dict) -> dict:
        if len(str(value)) > 10_000:
            raise serializers.ValidationError("At most 10,000 characters.")
        return value


class RecordingSerializer(serializers.ModelSerializer):
    sealed = serializers.SerializerMethodField()
    encryption = serializers.SerializerMethodField()
    download_url = serializers.SerializerMethodField(
        help_text="Signed media URL valid 1 hour (revoked with the share links).")

    class Meta:
        model = Recording
        fields = ["id", "kind", "status", "source", "media_url", "filename", "content_type",
                  "size", "content_sha256", "duration_seconds", "session_id", "call_sid",
                  "metadata", "legal_hold", "sealed", "encryption", "failure_reason",
                  "download_url", "created_at", "updated_at"]

    def get_sealed(self, obj: Recording) -> bool:
        return bool(getattr(obj, "seal", None))

    def get_encryption(self, obj: Recording) -> dict | None:
        if not obj.has_media:
            return None
        return {"algorithm": obj.encryption_algorithm, "kms_provider": obj.kms_provider,
                "kms_key_fingerprint": obj.kms_key_fingerprint}

    def get_download_url(self, obj: Recording) -> str | None:
        if not obj.has_media:
            return None
        return shares.link(obj, DOWNLOAD_SECONDS).url


class LegalHoldSerializer(serializers.Serializer):
    hold = serializers.BooleanField()
    reason = serializers.CharField(max_length=512, required=False, allow_blank=True, default="")


class LegalHoldOutSerializer(serializers.Serializer):
    recording_id = serializers.CharField()
    legal_hold = serializers.BooleanField()
    reason = serializers.CharField(allow_null=True)
    updated_by = serializers.CharField(allow_null=True)
    updated_at = serializers.DateTimeField(allow_null=True)


class SealInSerializer(serializers.Serializer):
    content_sha256 = serializers.CharField(required=False, validators=[_hex64])
    encryption_algorithm = serializers.CharField(max_length=64, required=False)


class SealSerializer(serializers.Serializer):
    content_sha256 = serializers.CharField()
    prev_hash = serializers.CharField()
    current_hash = serializers.CharField()
    canonicalization_version = serializers.CharField()
    kms_provider = serializers.CharField()
    kms_key_fingerprint = serializers.CharField()
    encryption_algorithm = serializers.CharField()
    sequence = serializers.IntegerField()
    sealed_by = serializers.CharField()
    sealed_at = serializers.DateTimeField()


class IntegritySerializer(serializers.Serializer):
    recording_id = serializers.CharField()
    sealed = serializers.BooleanField()
    seal = SealSerializer(allow_null=True)


class VerifySerializer(serializers.Serializer):
    recording_id = serializers.CharField()
    sealed = serializers.BooleanField()
    valid = serializers.BooleanField()
    reason = serializers.CharField()
    current_hash = serializers.CharField(allow_null=True)
    expected_hash = serializers.CharField(allow_null=True)


class ShareInSerializer(serializers.Serializer):
    expires_in_seconds = serializers.IntegerField(
        required=False, min_value=-(10**12), max_value=10**12,
        help_text="Clamped to 300..2592000 seconds; default 604800 (7 days).")


class ShareSerializer(serializers.Serializer):
    recording_id = serializers.CharField()
    share_url = serializers.CharField()
    token = serializers.CharField()
    expires_at = serializers.DateTimeField()
    revocable = serializers.BooleanField()


class RevokeSerializer(serializers.Serializer):
    recording_id = serializers.CharField()
    revoked = serializers.BooleanField()
