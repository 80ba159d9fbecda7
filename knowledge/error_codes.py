"""Error codes of the knowledge app (Document 3, 3 and 4.3)."""

from platform_core.errors import register

_APP = "knowledge"

register("KNOWLEDGE_DOCUMENT_NOT_PENDING", 409,
         "Only a pending document can be approved or rejected.", app=_APP)
register("KNOWLEDGE_DOCUMENT_NOT_FAILED", 409,
         "Only a failed document can be retried.", app=_APP)
register("KNOWLEDGE_DOCUMENT_UNREADABLE", 422,
         "The file is not a document type the knowledge base reads (PDF, DOCX, TXT, MD or "
         "HTML).", app=_APP)
register("KNOWLEDGE_DOCUMENT_PROCESSING", 409,
         "The document is being indexed; reindex it once that run has ended.", app=_APP)
register("KNOWLEDGE_HELP_CENTER_UNAVAILABLE", 502,
         "The help center could not be read; the reason is in the message.", app=_APP)
register("KNOWLEDGE_VERSION_NOT_RETAINED", 422,
         "That version's content was over the size cap and was not retained.", app=_APP)
register("KNOWLEDGE_SLUG_TAKEN", 409,
         "Another document of this knowledge base already uses that slug.", app=_APP)
register("KNOWLEDGE_CONNECTOR_PAUSED", 409,
         "The connector is paused; resume it (status active) before syncing.", app=_APP)
