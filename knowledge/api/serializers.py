"""Explicit input and output shapes of /api/v1/knowledge-bases and /api/v1/ai/kb."""

from __future__ import annotations

from rest_framework import serializers

from knowledge.models import Document, KnowledgeBase


class KnowledgeBaseSerializer(serializers.ModelSerializer):
    document_count = serializers.IntegerField(read_only=True, default=0)

    class Meta:
        model = KnowledgeBase
        fields = ["id", "name", "description", "document_count", "created_at", "updated_at"]


class KnowledgeBaseInSerializer(serializers.Serializer):
    name = serializers.CharField(min_length=1, max_length=200)
    description = serializers.CharField(max_length=5000, required=False, allow_blank=True,
                                        default="")


class DocumentSerializer(serializers.ModelSerializer):
    # Plain strings in the schema: the value sets are listed here rather than as enums
    # whose generated names would collide with other apps' `status` enums.
    status = serializers.CharField(read_only=True,
                                   help_text="Indexing: processing, ready or failed.")
    moderation_status = serializers.CharField(read_only=True,
                                              help_text="pending, approved or rejected.")

    class Meta:
        model = Document
        fields = ["id", "knowledge_base_id", "name", "type", "source_type", "source_url",
                  "metadata", "status",
                  "failure_reason", "moderation_status", "moderation_notes", "moderated_at",
                  "ground_truth", "chunks_done", "chunks_total", "size_bytes",
                  "content_sha256", "staleness_threshold_days", "indexed_at", "last_verified_at", "last_cited_at",
                  "version", "is_public", "slug", "summary", "published_at",
                  "created_at", "updated_at"]


class DocumentUploadSerializer(serializers.Serializer):
    file = serializers.FileField(help_text="PDF, DOCX, TXT, MD or HTML (checked by content), "
                                           "10 MB at most.")
    name = serializers.CharField(max_length=255, required=False)
    require_approval = serializers.BooleanField(
        required=False, default=False,
        help_text="The document stays `pending` (never retrieved) until approved.")
    staleness_threshold_days = serializers.IntegerField(min_value=1, max_value=3650,
                                                        required=False, allow_null=True,
                                                        default=None)


class DocumentMarkdownSerializer(serializers.Serializer):
    source_type = serializers.ChoiceField(choices=["markdown"])
    name = serializers.CharField(min_length=1, max_length=255)
    content = serializers.CharField(min_length=1, max_length=10 * 1024 * 1024)
    require_approval = serializers.BooleanField(required=False, default=False)
    staleness_threshold_days = serializers.IntegerField(min_value=1, max_value=3650,
                                                        required=False, allow_null=True,
                                                        default=None)


class ModerationInSerializer(serializers.Serializer):
    notes = serializers.CharField(max_length=2000, required=False, allow_blank=True,
                                  default="")


class SearchInSerializer(serializers.Serializer):
    query = serializers.CharField(min_length=1, max_length=2000)
    limit = serializers.IntegerField(min_value=1, max_value=20, default=5)
    threshold = serializers.FloatField(min_value=-1, max_value=1, required=False,
                                       allow_null=True, default=None)
    knowledge_base_ids = serializers.ListField(
        child=serializers.CharField(max_length=40), max_length=50, required=False,
        allow_null=True, default=None,
        help_text="Bases to search; every base of the organization when absent.")


class AnswersInSerializer(serializers.Serializer):
    question = serializers.CharField(min_length=1, max_length=2000)
    knowledge_base_ids = serializers.ListField(
        child=serializers.CharField(max_length=40), max_length=50, required=False,
        allow_null=True, default=None)
    limit = serializers.IntegerField(min_value=1, max_value=10, default=8)
    threshold = serializers.FloatField(min_value=-1, max_value=1, required=False,
                                       allow_null=True, default=None)
    min_confidence = serializers.FloatField(min_value=0, max_value=1, required=False,
                                            allow_null=True, default=None)
    language = serializers.CharField(max_length=35, required=False, allow_blank=True,
                                     allow_null=True, default=None)


class HitSerializer(serializers.Serializer):
    chunk_id = serializers.IntegerField()
    document_id = serializers.CharField()
    document_name = serializers.CharField()
    knowledge_base_id = serializers.CharField()
    heading = serializers.CharField()
    text = serializers.CharField()
    score = serializers.FloatField(help_text="Reciprocal-rank-fusion score.")
    similarity = serializers.FloatField(help_text="Cosine similarity to the query.")
    source = serializers.SerializerMethodField()

    def get_source(self, hit) -> dict:
        return {"type": hit.document_type, "name": hit.document_name,
                "vector_rank": hit.vector_rank, "text_rank": hit.text_rank}


class SearchOutSerializer(serializers.Serializer):
    query = serializers.CharField()
    results = HitSerializer(many=True)


class AnswerOutSerializer(serializers.Serializer):
    question = serializers.CharField()
    answer = serializers.CharField()
    answered = serializers.BooleanField()
    confidence = serializers.FloatField()
    min_confidence = serializers.FloatField()
    model = serializers.CharField(allow_null=True)
    citations = HitSerializer(many=True)


class StalenessQuerySerializer(serializers.Serializer):
    default_threshold_days = serializers.IntegerField(min_value=1, max_value=3650,
                                                      default=90)


class StalenessItemSerializer(serializers.Serializer):
    id = serializers.CharField()
    name = serializers.CharField()
    type = serializers.CharField()
    status = serializers.CharField()
    bucket = serializers.CharField(help_text="stale or critical.")
    age_days = serializers.IntegerField(allow_null=True)
    threshold_days = serializers.IntegerField()
    last_verified_at = serializers.DateTimeField(allow_null=True)
    last_cited_at = serializers.DateTimeField(allow_null=True)
    updated_at = serializers.DateTimeField(allow_null=True)


class StalenessTotalsSerializer(serializers.Serializer):
    fresh = serializers.IntegerField()
    stale = serializers.IntegerField()
    critical = serializers.IntegerField()
    documents_scanned = serializers.IntegerField()
    never_verified = serializers.IntegerField()


class StalenessSerializer(serializers.Serializer):
    knowledge_base_id = serializers.CharField()
    totals = StalenessTotalsSerializer()
    attention_required = StalenessItemSerializer(many=True)
    default_threshold_days = serializers.IntegerField()
    scanned_at = serializers.DateTimeField()
