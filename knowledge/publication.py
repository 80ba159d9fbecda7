"""Publication of a knowledge document (Document 3, 2.2 and 4.3): `is_public`, `slug`
(lowercase letters, digits and hyphens, at most 200, required to publish, unique within
the base) and `summary` (at most 2000). Every change is audit-logged."""

from __future__ import annotations

from django.db import IntegrityError, transaction
from django.utils import timezone

from platform_core.audit.services import audit_record
from platform_core.errors import APIError
from platform_core.identity.principal import Principal

from .models import Document

SLUG_PATTERN = r"^[a-z0-9-]+$"
SLUG_MAX = 200
SUMMARY_MAX = 2000


def publish(*, principal: Principal, document: Document, is_public: bool,
            slug: str | None = None, summary: str | None = None,
            request=None) -> Document:
    """Only the fields sent change (`is_public` is always sent). Unpublishing keeps the
    slug so the document can be published again at the same address."""
    with transaction.atomic():
        locked = Document.objects.select_for_update().get(pk=document.pk)
        before = {"is_public": locked.is_public, "slug": locked.slug,
                  "summary": locked.summary}
        if slug is not None:
            locked.slug = slug or None
        if summary is not None:
            locked.summary = summary
        if is_public and not locked.is_public:
            locked.published_at = timezone.now()
        locked.is_public = is_public
        try:
            with transaction.atomic():
                locked.save(update_fields=["is_public", "slug", "summary", "published_at",
                                           "updated_at"])
        except IntegrityError:
            raise APIError("KNOWLEDGE_SLUG_TAKEN", details={"slug": locked.slug}) from None
        after = {"is_public": locked.is_public, "slug": locked.slug,
                 "summary": locked.summary}
        audit_record(action="knowledge_document.publication_changed", principal=principal,
                     target=locked, request=request,
                     metadata={"before": before, "after": after,
                               "knowledge_base_id": locked.knowledge_base_id})
    return locked
