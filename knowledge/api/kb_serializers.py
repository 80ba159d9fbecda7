"""Input and output shapes of the /api/v1/ai/kb document routes and the help-center
import (Document 3, 4.2)."""

from __future__ import annotations

import json

from rest_framework import serializers

from knowledge.helpcenter import DEFAULT_LOCALE, PROVIDERS

from .serializers import DocumentSerializer

MAX_METADATA_BYTES = 16 * 1024


def _metadata_field():
    return serializers.DictField(required=False, default=dict,
                                 help_text="Free-form JSON object, 16 KB at most.")


class _MetadataMixin:
    def validate_metadata(self, value: dict) -> dict:
        if len(json.dumps(value)) > MAX_METADATA_BYTES:
            raise serializers.ValidationError("metadata is 16 KB of JSON at most.")
        return value


class DocumentUrlSerializer(_MetadataMixin, serializers.Serializer):
    source_type = serializers.ChoiceField(choices=["url"])
    source_url = serializers.URLField(max_length=2048,
                                      help_text="http(s) URL fetched by the platform (10 MB, "
                                                "redirects not followed).")
    name = serializers.CharField(min_length=1, max_length=255, required=False)
    metadata = _metadata_field()
    require_approval = serializers.BooleanField(required=False, default=False)
    staleness_threshold_days = serializers.IntegerField(min_value=1, max_value=3650,
                                                        required=False, allow_null=True,
                                                        default=None)


class DocumentMarkdownInSerializer(_MetadataMixin, serializers.Serializer):
    source_type = serializers.ChoiceField(choices=["markdown"])
    name = serializers.CharField(min_length=1, max_length=255)
    content = serializers.CharField(min_length=1, max_length=10 * 1024 * 1024)
    metadata = _metadata_field()
    require_approval = serializers.BooleanField(required=False, default=False)
    staleness_threshold_days = serializers.IntegerField(min_value=1, max_value=3650,
                                                        required=False, allow_null=True,
                                                        default=None)


class HelpCenterImportSerializer(serializers.Serializer):
    subdomain = serializers.RegexField(
        r"^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$", max_length=63,
        help_text="The help center's subdomain, e.g. `acme` for acme.zendesk.com.")
    # A plain string in the schema: a `provider` enum would collide with other apps' names.
    provider = serializers.CharField(default="zendesk", required=False,
                                     help_text="zendesk (default), freshdesk or intercom.")
    locale = serializers.RegexField(r"^[a-z]{2,3}(?:-[a-z0-9]{2,8}){0,2}$", max_length=35,
                                    default=DEFAULT_LOCALE, required=False)
    name_prefix = serializers.CharField(max_length=100, required=False, allow_blank=True,
                                        default="", trim_whitespace=False)
    max_articles = serializers.IntegerField(min_value=1, max_value=1000, default=250,
                                            required=False)
    api_key = serializers.CharField(max_length=500, required=False, allow_blank=True,
                                    default="", write_only=True,
                                    help_text="Freshdesk API key or Intercom access token; "
                                              "never stored.")

    def validate_provider(self, value: str) -> str:
        if value not in PROVIDERS:
            raise serializers.ValidationError(f"provider must be one of {', '.join(PROVIDERS)}.")
        return value

    def to_internal_value(self, data):
        if isinstance(data, dict) and isinstance(data.get("locale"), str):
            data = {**data, "locale": data["locale"].lower()}
        return super().to_internal_value(data)


class HelpCenterImportOutSerializer(serializers.Serializer):
    knowledge_base_id = serializers.CharField()
    provider = serializers.CharField()
    subdomain = serializers.CharField()
    locale = serializers.CharField()
    sandbox = serializers.BooleanField(help_text="True when the test-mode double answered.")
    articles_found = serializers.IntegerField()
    created = serializers.IntegerField()
    updated = serializers.IntegerField()
    unchanged = serializers.IntegerField()
    documents = DocumentSerializer(many=True, help_text="Created and updated documents.")
