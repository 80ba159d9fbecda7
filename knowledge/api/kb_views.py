"""Views of the organization-wide knowledge base under /api/v1/ai/kb (Document 3, 4.2):
documents (upload, URL, markdown), reindex, verify and the help-center import. Thin:
writes in `knowledge.sources`."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import mixins, status
from rest_framework.parsers import JSONParser
from rest_framework.response import Response

from knowledge import sources
from knowledge.models import Document, KnowledgeBase
from platform_core.api.pagination import KeysetCursorPagination
from platform_core.api.serialization import validated_input
from platform_core.api.views import PlatformAPIView, TenantViewSet
from platform_core.errors import validation_error
from platform_core.files.uploads import LimitedMultiPartParser
from platform_core.identity.principal import Principal

from . import kb_serializers as ks
from . import serializers as s

READ, WRITE = "knowledge:read", "knowledge:write"
SCOPES = {"GET": READ, "POST": WRITE, "DELETE": WRITE}


def create_from_json(principal: Principal, kb: KnowledgeBase, data: Any) -> Document:
    """A JSON document body: `{source_type: url, source_url, ...}` or
    `{source_type: markdown, name, content, ...}` (shared with /knowledge-bases/{id})."""
    kind = data.get("source_type") if hasattr(data, "get") else None
    if kind == "url":
        body = validated_input(ks.DocumentUrlSerializer, data).validated_data
        return sources.document_from_url(
            principal=principal, kb=kb, url=body["source_url"], name=body.get("name"),
            metadata=body["metadata"], require_approval=body["require_approval"],
            staleness_threshold_days=body["staleness_threshold_days"])
    if kind == "markdown":
        body = validated_input(ks.DocumentMarkdownInSerializer, data).validated_data
        return sources.document_from_markdown(
            principal=principal, kb=kb, name=body["name"], content=body["content"],
            metadata=body["metadata"], require_approval=body["require_approval"],
            staleness_threshold_days=body["staleness_threshold_days"])
    raise validation_error("source_type", "source_type must be `url` or `markdown` (or send "
                                          "the file as multipart).")


class OrgKBPagination(KeysetCursorPagination):
    default_limit = 100
    max_limit = 100


class OrgKBDocumentViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, TenantViewSet):
    """`/ai/kb/documents[/{id}]`: the documents of the organization-wide base."""

    model = Document
    serializer_class = s.DocumentSerializer
    parser_classes = [JSONParser, LimitedMultiPartParser]
    pagination_class = OrgKBPagination
    required_scopes = SCOPES

    def scope_queryset(self, queryset):
        return queryset.filter(knowledge_base__is_org_default=True)

    @extend_schema(
        request={"multipart/form-data": s.DocumentUploadSerializer,
                 "application/json": ks.DocumentUrlSerializer},
        responses={201: s.DocumentSerializer},
        description=(
            "Multipart `file` (PDF, DOCX, TXT, MD or HTML, type read from the content; "
            "10 MB, 413 above), or JSON `{source_type: url, source_url, name?, metadata?}` "
            "or `{source_type: markdown, name, content, metadata?}`. Answers `processing`; "
            "the worker extracts or fetches the text and indexes it: `ready`, or `failed` "
            "with `failure_reason` (an encrypted, unreadable or mismatched file, a URL that "
            "cannot be fetched). Progress in `chunks_done`/`chunks_total`."))
    def create(self, request):
        kb = sources.org_kb(self.principal)
        if request.content_type.startswith("multipart/"):
            body = validated_input(s.DocumentUploadSerializer, request.data).validated_data
            document = sources.document_from_upload(
                principal=self.principal, kb=kb, uploaded=body["file"],
                name=body.get("name"), require_approval=body["require_approval"],
                staleness_threshold_days=body["staleness_threshold_days"])
        else:
            document = create_from_json(self.principal, kb, request.data)
        return Response(s.DocumentSerializer(document).data, status=status.HTTP_201_CREATED)

    @extend_schema(responses={204: None},
                   description="Removes the document with its chunks and vectors.")
    def destroy(self, request, pk=None):
        from knowledge import services

        services.document_delete(principal=self.principal, document=self.get_object())
        return Response(status=status.HTTP_204_NO_CONTENT)

    @extend_schema(request=None, responses={202: s.DocumentSerializer},
                   description="Rebuild the chunks and vectors (a URL document is fetched "
                               "again first). 409 while the document is `processing`.")
    def reindex(self, request, pk=None):
        document = sources.document_reindex(principal=self.principal,
                                            document=self.get_object())
        return Response(s.DocumentSerializer(document).data, status=status.HTTP_202_ACCEPTED)

    @extend_schema(request=None, responses=s.DocumentSerializer,
                   description="Stamp `last_verified_at` (the staleness clock restarts).")
    def verify(self, request, pk=None):
        document = sources.document_verify(principal=self.principal,
                                           document=self.get_object())
        return Response(s.DocumentSerializer(document).data)


class HelpCenterImportView(PlatformAPIView):
    required_scopes = {"POST": WRITE}

    @extend_schema(request=ks.HelpCenterImportSerializer,
                   responses={201: ks.HelpCenterImportOutSerializer},
                   description=(
                       "Import the published articles of a help center into the "
                       "organization-wide base (`provider` zendesk (default), freshdesk or "
                       "intercom; `max_articles` 1-1000, default 250). New articles become "
                       "documents, changed ones are updated, each indexed in the "
                       "background. Test mode reads a built-in sample help center. 502 "
                       "`KNOWLEDGE_HELP_CENTER_UNAVAILABLE` when it cannot be read."))
    def post(self, request):
        body = validated_input(ks.HelpCenterImportSerializer, request.data).validated_data
        result = sources.import_help_center(principal=self.principal, **body)
        return Response(ks.HelpCenterImportOutSerializer(result).data,
                        status=status.HTTP_201_CREATED)
