"""Background indexing: tasks take ids and call the service."""

from __future__ import annotations

from celery import shared_task

from platform_core.tenancy.context import tenant_context


@shared_task(name="knowledge.index_document")
def index_document(document_id: str, refetch: bool = False) -> str:
    from . import indexing, sources
    from .models import Document

    document = Document.objects.dangerously_unscoped().select_related(
        "organization").filter(pk=document_id).first()
    if document is None:
        return "gone"
    with tenant_context(document.organization):
        # Uploaded bytes and URLs become text first; a failure there ends it `failed`.
        document = sources.prepare(document, refetch=refetch)
        if document.status == "failed":
            return document.status
        return indexing.index_document(document).status


from .connectors.tasks import sync_connector, sync_due_connectors  # noqa: E402, F401
