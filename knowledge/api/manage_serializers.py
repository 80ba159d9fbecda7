"""Input and output shapes of the management routes: versions, diff, rollback,
publication, staleness under /ai/kb, connectors and their catalog."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from knowledge import publication
from knowledge.connectors import catalog
from knowledge.connectors.models import Connector

from .serializers import StalenessQuerySerializer

SECRET_MAX = 4096
INTERVAL_MIN, INTERVAL_MAX = 15, 10080  # a quarter of an hour to a week


class VersionSerializer(serializers.Serializer):
    version = serializers.IntegerField()
    is_head = serializers.BooleanField()
    name = serializers.CharField()
    type = serializers.CharField()
    size_bytes = serializers.IntegerField()
    content_sha256 = serializers.CharField()
    content_retained = serializers.BooleanField(
        help_text="False when the text was over KNOWLEDGE_VERSION_MAX_BYTES.")
    replaced_by = serializers.CharField(allow_null=True,
                                        help_text="update, sync or rollback; null for the head.")
    created_by = serializers.CharField(allow_null=True)
    superseded_at = serializers.DateTimeField(allow_null=True)


class DiffQuerySerializer(serializers.Serializer):
    # `from` is a Python keyword: declared through the fields mapping below.
    to = serializers.IntegerField(min_value=1)

    def get_fields(self):
        fields = super().get_fields()
        fields["from"] = serializers.IntegerField(min_value=1)
        return fields


class HunkSerializer(serializers.Serializer):
    header = serializers.CharField()
    lines = serializers.ListField(child=serializers.CharField(),
                                  help_text="Lines prefixed `+`, `-` or a space.")


class DiffSerializer(serializers.Serializer):
    from_version = serializers.IntegerField()
    to_version = serializers.IntegerField()
    added = serializers.IntegerField()
    removed = serializers.IntegerField()
    unchanged = serializers.IntegerField()
    hunks = HunkSerializer(many=True)


class RollbackInSerializer(serializers.Serializer):
    version = serializers.IntegerField(min_value=1)


class PublicationInSerializer(serializers.Serializer):
    is_public = serializers.BooleanField(required=True)
    slug = serializers.RegexField(publication.SLUG_PATTERN, max_length=publication.SLUG_MAX,
                                  required=False, allow_null=True,
                                  help_text="Lowercase letters, digits and hyphens.")
    summary = serializers.CharField(max_length=publication.SUMMARY_MAX, required=False,
                                    allow_blank=True, allow_null=True)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if attrs["is_public"] and not attrs.get("slug"):
            raise serializers.ValidationError({"slug": "A slug is required to publish."})
        return attrs


class AIStalenessQuerySerializer(StalenessQuerySerializer):
    limit = serializers.IntegerField(min_value=1, max_value=1000, default=25)


class CatalogQuerySerializer(serializers.Serializer):
    category = serializers.ChoiceField(choices=catalog.CATEGORIES, required=False)
    # A pattern, not an enum: generated enum names would collide with other `status` sets.
    status = serializers.RegexField(r"^(available|connected)$", required=False,
                                    help_text="available or connected.")
    search = serializers.CharField(max_length=200, required=False, allow_blank=True)


class CatalogEntrySerializer(serializers.Serializer):
    id = serializers.CharField()
    name = serializers.CharField()
    category = serializers.CharField(help_text="wiki, file_storage or help_center.")
    description = serializers.CharField()
    status = serializers.CharField(help_text="connected (the organization has one) or "
                                             "available.")
    config_fields = serializers.ListField(child=serializers.CharField())
    optional_config_fields = serializers.ListField(child=serializers.CharField())
    credential_fields = serializers.ListField(child=serializers.CharField())
    docs_url = serializers.CharField()


class ConnectorSerializer(serializers.ModelSerializer):
    type = serializers.CharField(source="kind", read_only=True)
    status = serializers.CharField(read_only=True, help_text="active or paused.")
    sync_status = serializers.CharField(
        read_only=True, help_text="never, queued, running, succeeded or failed.")
    credentials_configured = serializers.SerializerMethodField()
    credential_fields = serializers.SerializerMethodField(
        help_text="Names of the stored credentials; their values are never returned.")

    class Meta:
        model = Connector
        fields = ["id", "knowledge_base_id", "type", "name", "config", "status",
                  "sync_interval_minutes", "next_sync_at", "sync_status", "last_synced_at",
                  "last_sync_error", "last_sync_stats", "credentials_configured",
                  "credential_fields", "created_at", "updated_at"]

    def get_credentials_configured(self, obj: Connector) -> bool:
        return bool(obj.credentials_encrypted)

    def get_credential_fields(self, obj: Connector) -> list[str]:
        return sorted(obj.credentials)


def _check_config(kind: str, config: dict[str, Any]) -> dict[str, Any]:
    entry = catalog.BY_ID[kind]
    allowed = set(entry.config_fields) | set(entry.optional_config_fields) | {"sandbox_pages"}
    unknown = sorted(set(config) - allowed)
    if unknown:
        raise serializers.ValidationError({"config": f"Unknown fields: {', '.join(unknown)}."})
    for name in entry.config_fields:
        value = config.get(name)
        if not isinstance(value, str) or not value.strip() or len(value) > 2048:
            raise serializers.ValidationError({"config": f"`{name}` is required (a string)."})
    site = config.get("site_url")
    if site is not None and not str(site).startswith(("https://", "http://")):
        raise serializers.ValidationError({"config": "`site_url` must be an http(s) URL."})
    pages = config.get("sandbox_pages")
    if pages is not None and (not isinstance(pages, list) or len(pages) > 1000 or not all(
            isinstance(p, dict) and isinstance(p.get("id"), str | int)
            and isinstance(p.get("content", ""), str) for p in pages)):
        raise serializers.ValidationError(
            {"config": "`sandbox_pages` is a list of {id, title, content}."})
    return config


def _check_credentials(kind: str, credentials: dict[str, Any]) -> dict[str, Any]:
    entry = catalog.BY_ID[kind]
    unknown = sorted(set(credentials) - set(entry.credential_fields))
    if unknown:
        raise serializers.ValidationError(
            {"credentials": f"Unknown fields: {', '.join(unknown)}."})
    for name in entry.credential_fields:
        value = credentials.get(name)
        if not isinstance(value, str) or not value or len(value) > SECRET_MAX:
            raise serializers.ValidationError(
                {"credentials": f"`{name}` is required (a string)."})
    return credentials


class ConnectorInSerializer(serializers.Serializer):
    type = serializers.ChoiceField(choices=[e.id for e in catalog.ENTRIES],
                                   help_text="A catalog id (GET /ai/kb/connectors).")
    name = serializers.CharField(min_length=1, max_length=200, required=False)
    config = serializers.DictField(required=False, default=dict)
    credentials = serializers.DictField(help_text="Encrypted at rest; never returned.")
    sync_interval_minutes = serializers.IntegerField(
        min_value=INTERVAL_MIN, max_value=INTERVAL_MAX, required=False, allow_null=True,
        default=None, help_text="Scheduled sync period; null syncs only on demand.")
    status = serializers.RegexField(r"^(active|paused)$", default="active",
                                    help_text="active or paused.")

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        kind = attrs["type"]
        _check_config(kind, attrs["config"])
        _check_credentials(kind, attrs["credentials"])
        attrs.setdefault("name", catalog.BY_ID[kind].name)
        return attrs


class ConnectorPatchSerializer(serializers.Serializer):
    name = serializers.CharField(min_length=1, max_length=200, required=False)
    config = serializers.DictField(required=False)
    credentials = serializers.DictField(required=False,
                                        help_text="Replaces every stored credential.")
    sync_interval_minutes = serializers.IntegerField(
        min_value=INTERVAL_MIN, max_value=INTERVAL_MAX, required=False, allow_null=True)
    status = serializers.RegexField(r"^(active|paused)$", required=False,
                                    help_text="active or paused.")

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        kind = self.context["kind"]
        if "config" in attrs:
            _check_config(kind, attrs["config"])
        if "credentials" in attrs:
            _check_credentials(kind, attrs["credentials"])
        return attrs
