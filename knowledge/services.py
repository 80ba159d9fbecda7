"""Writes of the knowledge app: bases, documents, moderation (Document 3, 3 and 4.3)."""

from __future__ import annotations

import hashlib

from django.db import transaction
from django.utils import timezone

from platform_core.audit.services import audit_record
from platform_core.errors import APIError
from platform_core.identity.principal import Principal

from .models import Chunk, Document, IndexStatus, KnowledgeBase, Moderation


def _queue_indexing(document_id: str) -> None:
    from .tasks import index_document

    transaction.on_commit(lambda: index_document.delay(document_id))


def kb_create(*, principal: Principal, name: str, description: str = "") -> KnowledgeBase:
    with transaction.atomic():
        kb = KnowledgeBase.objects.create(organization=principal.organization, name=name,
                                          description=description)
        audit_record(action="knowledge_base.created", principal=principal, target=kb)
    return kb


def kb_update(*, principal: Principal, kb: KnowledgeBase, name: str,
              description: str = "") -> KnowledgeBase:
    with transaction.atomic():
        kb.name, kb.description = name, description
        kb.save(update_fields=["name", "description", "updated_at"])
        audit_record(action="knowledge_base.updated", principal=principal, target=kb)
    return kb


def kb_delete(*, principal: Principal, kb: KnowledgeBase) -> None:
    """Purges every chunk (text, vector, tsvector) and document, then the base."""
    with transaction.atomic():
        Chunk.objects.filter(knowledge_base=kb).delete()
        Document.objects.filter(knowledge_base=kb).delete()
        audit_record(action="knowledge_base.deleted", principal=principal, target=kb)
        kb.delete()


def document_create(*, principal: Principal, kb: KnowledgeBase, name: str, kind: str,
                    source_type: str, content: str, size_bytes: int,
                    require_approval: bool = False,
                    staleness_threshold_days: int | None = None) -> Document:
    """A new document, `processing` until the background indexing ends. A document that
    needs approval is indexed too but stays `pending`: retrieval never reads its chunks."""
    with transaction.atomic():
        document = Document.objects.create(
            organization=principal.organization, knowledge_base=kb, name=name[:255],
            type=kind, source_type=source_type, size_bytes=size_bytes, content=content,
            content_sha256=hashlib.sha256(content.encode()).hexdigest(),
            staleness_threshold_days=staleness_threshold_days,
            moderation_status=Moderation.PENDING if require_approval else Moderation.APPROVED)
        audit_record(action="knowledge_document.created", principal=principal,
                     target=document, metadata={"knowledge_base_id": kb.pk})
        _queue_indexing(document.pk)
    return document


def document_from_upload(*, principal: Principal, kb: KnowledgeBase, uploaded,
                         name: str | None, require_approval: bool,
                         staleness_threshold_days: int | None = None) -> Document:
    """Stored as uploaded; the worker reads the type from the content (knowledge/sources)."""
    from . import sources

    return sources.document_from_upload(
        principal=principal, kb=kb, uploaded=uploaded, name=name,
        require_approval=require_approval, staleness_threshold_days=staleness_threshold_days)


def document_delete(*, principal: Principal, document: Document) -> None:
    with transaction.atomic():
        Chunk.objects.filter(document=document).delete()
        audit_record(action="knowledge_document.deleted", principal=principal,
                     target=document)
        document.delete()


def document_retry(*, principal: Principal, document: Document) -> Document:
    with transaction.atomic():
        locked = Document.objects.select_for_update().get(pk=document.pk)
        if locked.status != IndexStatus.FAILED:
            raise APIError("KNOWLEDGE_DOCUMENT_NOT_FAILED")
        locked.status, locked.failure_reason = IndexStatus.PROCESSING, ""
        locked.save(update_fields=["status", "failure_reason", "updated_at"])
        audit_record(action="knowledge_document.retried", principal=principal, target=locked)
        _queue_indexing(locked.pk)
    return locked


def document_moderate(*, principal: Principal, document: Document, approve: bool,
                      notes: str = "") -> Document:
    """Section 3: approve promotes to ground truth and makes the chunks retrievable
    (indexing starts again when the earlier indexing failed); reject keeps the document
    out of retrieval."""
    with transaction.atomic():
        locked = Document.objects.select_for_update().get(pk=document.pk)
        if locked.moderation_status != Moderation.PENDING:
            raise APIError("KNOWLEDGE_DOCUMENT_NOT_PENDING")
        locked.moderation_status = Moderation.APPROVED if approve else Moderation.REJECTED
        locked.moderation_notes = notes
        locked.moderated_at = timezone.now()
        locked.ground_truth = approve
        fields = ["moderation_status", "moderation_notes", "moderated_at", "ground_truth",
                  "updated_at"]
        if approve and locked.status == IndexStatus.FAILED:
            locked.status, locked.failure_reason = IndexStatus.PROCESSING, ""
            fields += ["status", "failure_reason"]
            requeue = True
        else:
            requeue = False  # indexed, or its upload's indexing is still on its way
        locked.save(update_fields=fields)
        audit_record(action="knowledge_document." + ("approved" if approve else "rejected"),
                     principal=principal, target=locked, metadata={"notes": notes})
        if requeue:
            _queue_indexing(locked.pk)
    return locked
