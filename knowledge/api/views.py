"""Views of /api/v1/knowledge-bases (Document 3, 4.3) and /api/v1/ai/kb search and answers
(4.2). Thin: validation here, writes in `knowledge.services`, reads in `selectors`."""

from __future__ import annotations

from django.db.models import Count
from django.http import Http404
from drf_spectacular.utils import extend_schema
from rest_framework import mixins, status
from rest_framework.parsers import JSONParser
from rest_framework.response import Response

from agents.ai.api.base import AIView
from knowledge import answers, retrieval, selectors, services
from knowledge.models import Document, KnowledgeBase
from platform_core.api.serialization import validated_input
from platform_core.api.views import TenantViewSet
from platform_core.errors import validation_error
from platform_core.files.uploads import LimitedMultiPartParser

from . import serializers as s

READ, WRITE = "knowledge:read", "knowledge:write"
SCOPES = {"GET": READ, "POST": WRITE, "PUT": WRITE, "DELETE": WRITE}


class KnowledgeBaseViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, TenantViewSet):
    model = KnowledgeBase
    serializer_class = s.KnowledgeBaseSerializer
    required_scopes = SCOPES

    def scope_queryset(self, queryset):
        return queryset.annotate(document_count=Count("documents"))

    @extend_schema(request=s.KnowledgeBaseInSerializer,
                   responses={201: s.KnowledgeBaseSerializer})
    def create(self, request):
        body = validated_input(s.KnowledgeBaseInSerializer, request.data).validated_data
        kb = services.kb_create(principal=self.principal, **body)
        kb.document_count = 0
        return Response(s.KnowledgeBaseSerializer(kb).data, status=status.HTTP_201_CREATED)

    @extend_schema(request=s.KnowledgeBaseInSerializer, responses=s.KnowledgeBaseSerializer,
                   description="Replace the name and description.")
    def update(self, request, pk=None):
        kb = self.get_object()
        body = validated_input(s.KnowledgeBaseInSerializer, request.data).validated_data
        kb = services.kb_update(principal=self.principal, kb=kb, **body)
        return Response(s.KnowledgeBaseSerializer(kb).data)

    @extend_schema(responses={204: None},
                   description="Deletes the base with every document, chunk and vector.")
    def destroy(self, request, pk=None):
        services.kb_delete(principal=self.principal, kb=self.get_object())
        return Response(status=status.HTTP_204_NO_CONTENT)

    @extend_schema(parameters=[s.StalenessQuerySerializer], responses=s.StalenessSerializer)
    def staleness(self, request, pk=None):
        query = validated_input(s.StalenessQuerySerializer, request.query_params).validated_data
        return Response(s.StalenessSerializer(selectors.staleness(
            self.get_object(), default_threshold_days=query["default_threshold_days"])).data)


class InKnowledgeBase:
    """Views under `knowledge-bases/{kb_pk}/…`: the base must be the organization's (else
    404), and their rows are the base's."""

    def initial(self, request, *args, **kwargs):
        super().initial(request, *args, **kwargs)
        if getattr(self, "swagger_fake_view", False):
            return
        self.kb = selectors.knowledge_base(kwargs.get("kb_pk", ""))
        if self.kb is None:
            raise Http404

    def scope_queryset(self, queryset):
        return queryset.filter(knowledge_base_id=self.kwargs.get("kb_pk", ""))


class DocumentViewSet(InKnowledgeBase, mixins.ListModelMixin, TenantViewSet):
    """Documents of one base: `/knowledge-bases/{kb_pk}/documents[/{pk}]`."""

    model = Document
    serializer_class = s.DocumentSerializer
    parser_classes = [JSONParser, LimitedMultiPartParser]
    required_scopes = SCOPES


    @extend_schema(
        request={"multipart/form-data": s.DocumentUploadSerializer,
                 "application/json": s.DocumentMarkdownSerializer},
        responses={201: s.DocumentSerializer},
        description=(
            "Multipart `file` (PDF, DOCX, TXT, MD or HTML, checked by content; 10 MB) or JSON "
            "`{source_type: markdown, name, content}` or `{source_type: url, source_url, "
            "name?, metadata?}`. The document answers `processing`; "
            "indexing runs in the background (`ready` or `failed` with `failure_reason`, "
            "progress in `chunks_done`/`chunks_total`). `require_approval` keeps it "
            "`pending`: never retrieved until approved."))
    def create(self, request, kb_pk=None):
        if request.content_type.startswith("multipart/"):
            body = validated_input(s.DocumentUploadSerializer, request.data).validated_data
            document = services.document_from_upload(
                principal=self.principal, kb=self.kb, uploaded=body["file"],
                name=body.get("name"), require_approval=body["require_approval"],
                staleness_threshold_days=body["staleness_threshold_days"])
        else:  # JSON: `source_type` markdown or url (kb_views.create_from_json)
            from .kb_views import create_from_json

            document = create_from_json(self.principal, self.kb, request.data)
        return Response(s.DocumentSerializer(document).data, status=status.HTTP_201_CREATED)

    @extend_schema(responses={204: None})
    def destroy(self, request, kb_pk=None, pk=None):
        services.document_delete(principal=self.principal, document=self.get_object())
        return Response(status=status.HTTP_204_NO_CONTENT)

    @extend_schema(request=None, responses={202: s.DocumentSerializer},
                   description="Re-index a `failed` document (409 otherwise).")
    def retry(self, request, kb_pk=None, pk=None):
        document = services.document_retry(principal=self.principal,
                                           document=self.get_object())
        return Response(s.DocumentSerializer(document).data, status=status.HTTP_202_ACCEPTED)

    def _moderate(self, request, approve: bool):
        body = validated_input(s.ModerationInSerializer, request.data or {}).validated_data
        document = services.document_moderate(principal=self.principal,
                                              document=self.get_object(), approve=approve,
                                              notes=body["notes"])
        return Response(s.DocumentSerializer(document).data)

    @extend_schema(request=s.ModerationInSerializer, responses=s.DocumentSerializer,
                   description="Approve a `pending` document: retrievable, ground truth.")
    def approve(self, request, kb_pk=None, pk=None):
        return self._moderate(request, True)

    @extend_schema(request=s.ModerationInSerializer, responses=s.DocumentSerializer,
                   description="Reject a `pending` document: never retrieved.")
    def reject(self, request, kb_pk=None, pk=None):
        return self._moderate(request, False)


def _check_bases(ids: list[str] | None) -> None:
    if ids is not None and KnowledgeBase.objects.filter(pk__in=set(ids)).count() != len(
            set(ids)):
        raise validation_error("knowledge_base_ids", "Unknown knowledge base id.")


class KBSearchView(AIView):
    required_scopes = {"POST": READ}

    @extend_schema(request=s.SearchInSerializer, responses=s.SearchOutSerializer,
                   description="Hybrid search (vector + full text, reciprocal rank fusion) "
                               "over the approved, ready chunks of the organization's bases.")
    def post(self, request):
        body = self.body(s.SearchInSerializer)
        _check_bases(body["knowledge_base_ids"])
        hits = retrieval.retrieve(self.organization, body["query"],
                                  knowledge_base_ids=body["knowledge_base_ids"],
                                  limit=body["limit"], threshold=body["threshold"])
        return Response(s.SearchOutSerializer({"query": body["query"], "results": hits}).data)


class KBAnswersView(AIView):
    @extend_schema(request=s.AnswersInSerializer, responses=s.AnswerOutSerializer,
                   description="A grounded answer with citations and a confidence; below "
                               "`min_confidence` (default 0.3) it says it does not know.")
    def post(self, request):
        body = self.body(s.AnswersInSerializer)
        _check_bases(body["knowledge_base_ids"])
        floor = body["min_confidence"]
        result = answers.answer(self.organization, body["question"],
                                knowledge_base_ids=body["knowledge_base_ids"],
                                limit=body["limit"], threshold=body["threshold"],
                                min_confidence=floor, language=body["language"] or None)
        return Response(s.AnswerOutSerializer({
            "question": body["question"], "answer": result.answer,
            "answered": result.answered, "confidence": result.confidence,
            "min_confidence": answers.DEFAULT_MIN_CONFIDENCE if floor is None else floor,
            "model": result.model, "citations": result.citations}).data)
