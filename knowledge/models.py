"""Knowledge bases, their documents and the indexed chunks (Document 3, 2.2, 3 and 4.3).

A chunk keeps its embedding as little-endian float32 bytes (384 dimensions from the AI
engine) and a PostgreSQL full-text `tsvector` (GIN). Retrieval reads only the chunks of
documents that are `ready` and `approved` (see `selectors.retrievable_chunks`).
"""

from __future__ import annotations

from django.contrib.postgres.indexes import GinIndex
from django.contrib.postgres.search import SearchVectorField
from django.db import models

from platform_core.ids import PublicIdField
from platform_core.tenancy.models import TenantModel


class IndexStatus(models.TextChoices):
    PROCESSING = "processing"
    READY = "ready"
    FAILED = "failed"


class Moderation(models.TextChoices):
    PENDING = "pending"
    APPROVED = "approved"
    REJECTED = "rejected"


class KnowledgeBase(TenantModel):
    id = PublicIdField(prefix="kb")
    name = models.CharField(max_length=200)
    description = models.TextField(blank=True, default="")
    # The organization-wide base behind /api/v1/ai/kb (one per organization, made on use).
    is_org_default = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        indexes = [models.Index(fields=["organization", "id"])]
        constraints = [models.UniqueConstraint(
            fields=["organization"], condition=models.Q(is_org_default=True),
            name="knowledge_kb_one_org_default")]


class Document(TenantModel):
    id = PublicIdField(prefix="kbd")
    knowledge_base = models.ForeignKey(KnowledgeBase, on_delete=models.CASCADE,
                                       related_name="documents")
    name = models.CharField(max_length=255)
    type = models.CharField(max_length=12)  # pdf | docx | txt | md | html | markdown
    # upload | markdown | url | help_center
    source_type = models.CharField(max_length=12, default="upload")
    source_url = models.URLField(max_length=2048, blank=True, default="")
    # A help-center article's `<provider>:<article id>`: a re-import updates, not duplicates.
    external_id = models.CharField(max_length=200, blank=True, default="")
    metadata = models.JSONField(default=dict, blank=True)
    size_bytes = models.PositiveIntegerField(default=0)
    content_sha256 = models.CharField(max_length=64, blank=True, default="")
    content = models.TextField(blank=True, default="")  # the extracted plain text
    status = models.CharField(max_length=12, choices=IndexStatus.choices,
                              default=IndexStatus.PROCESSING)
    failure_reason = models.CharField(max_length=500, blank=True, default="")
    moderation_status = models.CharField(max_length=12, choices=Moderation.choices,
                                         default=Moderation.APPROVED)
    moderation_notes = models.TextField(blank=True, default="")
    moderated_at = models.DateTimeField(null=True, blank=True)
    ground_truth = models.BooleanField(default=False)
    chunks_total = models.PositiveIntegerField(default=0)
    chunks_done = models.PositiveIntegerField(default=0)
    indexed_at = models.DateTimeField(null=True, blank=True)
    last_verified_at = models.DateTimeField(null=True, blank=True)
    last_cited_at = models.DateTimeField(null=True, blank=True)
    # Staleness threshold of this document (1-3650 days); the scorecard's default otherwise.
    staleness_threshold_days = models.PositiveIntegerField(null=True, blank=True)
    # The head's version number; earlier heads are kept as `DocumentVersion` snapshots.
    version = models.PositiveIntegerField(default=1)
    # Publication (Document 3, 2.2 and 4.3): a public document is addressed by its slug.
    is_public = models.BooleanField(default=False)
    slug = models.CharField(max_length=200, null=True, blank=True)
    summary = models.TextField(blank=True, default="")
    published_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(
            fields=["knowledge_base", "slug"], condition=models.Q(slug__isnull=False),
            name="knowledge_document_kb_slug")]
        indexes = [models.Index(fields=["organization", "knowledge_base", "id"]),
                   models.Index(fields=["knowledge_base", "external_id"],
                                condition=~models.Q(external_id=""),
                                name="knowledge_doc_external_id")]


class DocumentSource(TenantModel):
    """The uploaded bytes of a document, kept until its text is extracted (the worker reads
    them; a retry after a failed extraction reads them again). Its own table so a document
    list never loads up to 10 MB per row."""

    document = models.OneToOneField(Document, on_delete=models.CASCADE, primary_key=True,
                                    related_name="source")
    file_name = models.CharField(max_length=255, blank=True, default="")
    data = models.BinaryField()
    created_at = models.DateTimeField(auto_now_add=True)


class Chunk(TenantModel):
    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="chunks")
    knowledge_base = models.ForeignKey(KnowledgeBase, on_delete=models.CASCADE,
                                       related_name="chunks")
    ordinal = models.PositiveIntegerField()
    heading = models.CharField(max_length=500, blank=True, default="")
    text = models.TextField()
    token_count = models.PositiveIntegerField(default=0)
    embedding = models.BinaryField()  # float32 little-endian, L2-normalised
    search_vector = SearchVectorField(null=True)

    class Meta:
        indexes = [
            models.Index(fields=["organization", "knowledge_base"]),
            GinIndex(fields=["search_vector"], name="knowledge_chunk_tsv_gin"),
        ]
        constraints = [models.UniqueConstraint(fields=["document", "ordinal"],
                                               name="knowledge_chunk_document_ordinal")]


class DocumentVersion(TenantModel):
    """An immutable snapshot of a document head that was replaced (content change or
    rollback). The content is kept only up to KNOWLEDGE_VERSION_MAX_BYTES; above it only
    the hash and size remain (`content_retained` false)."""

    id = PublicIdField(prefix="kbv")
    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="versions")
    version = models.PositiveIntegerField()
    name = models.CharField(max_length=255)
    type = models.CharField(max_length=12)
    size_bytes = models.PositiveIntegerField(default=0)
    content_sha256 = models.CharField(max_length=64)
    content = models.TextField(blank=True, default="")
    content_retained = models.BooleanField(default=True)
    # Why the head moved on: update, sync (a connector brought new content) or rollback.
    replaced_by = models.CharField(max_length=12)
    created_by = models.CharField(max_length=64, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [models.Index(fields=["organization", "document", "version"])]
        constraints = [models.UniqueConstraint(fields=["document", "version"],
                                               name="knowledge_version_document_version")]

    def save(self, *args, **kwargs) -> None:
        if not self._state.adding:
            raise ValueError("Document versions are immutable.")
        super().save(*args, **kwargs)


from .connectors.models import Connector, ConnectorPage  # noqa: E402, F401  (app models)
