"""Where a document's text comes from: uploads, URLs, the organization-wide base, and the
worker step that turns a source into text before indexing (Document 3, 2.2, 3, 4.2, 8).

A request only stores the source (the bytes, or the URL) and answers `processing`; the
worker (`tasks.index_document` -> `prepare`) extracts or fetches the text, then indexes it.
Whatever goes wrong there (an encrypted PDF, a mismatched type, a URL that answers 404 or
is too large) ends the document `failed` with `failure_reason`; never an exception.
"""

from __future__ import annotations

import hashlib
from urllib.parse import urlsplit

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from platform_core.audit.services import audit_record
from platform_core.errors import APIError, validation_error
from platform_core.identity.principal import Principal
from platform_core.net import http, ssrf

from . import extract, versions
from .models import Document, DocumentSource, IndexStatus, KnowledgeBase, Moderation

ORG_KB_NAME = "Organization knowledge base"
DEFAULT_FETCH_TIMEOUT = 15.0  # seconds for one URL fetch, connect to last byte
# What a fetched Content-Type says, used only as the name hint; the bytes still decide.
_CONTENT_TYPE_NAMES = {
    "text/html": "page.html", "application/xhtml+xml": "page.html",
    "application/pdf": "document.pdf", "text/markdown": "document.md",
    "text/x-markdown": "document.md", "text/plain": "document.txt",
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document": "doc.docx",
}


def _queue(document_id: str, *, refetch: bool = False) -> None:
    from .tasks import index_document

    transaction.on_commit(lambda: index_document.delay(document_id, refetch=refetch))


# --- the organization-wide base ----------------------------------------------------------

def org_kb(principal: Principal) -> KnowledgeBase:
    """The base behind /api/v1/ai/kb, made on first write (one per organization)."""
    kb = KnowledgeBase.objects.filter(is_org_default=True).first()
    if kb is not None:
        return kb
    try:
        with transaction.atomic():
            kb = KnowledgeBase.objects.create(organization=principal.organization,
                                              name=ORG_KB_NAME, is_org_default=True)
            audit_record(action="knowledge_base.created", principal=principal, target=kb)
            return kb
    except IntegrityError:  # a concurrent first write made it
        return KnowledgeBase.objects.get(is_org_default=True)


# --- creating documents ------------------------------------------------------------------

def _new_document(*, principal: Principal, kb: KnowledgeBase, name: str, kind: str,
                  source_type: str, require_approval: bool = False,
                  staleness_threshold_days: int | None = None, **fields) -> Document:
    document = Document.objects.create(
        organization=principal.organization, knowledge_base=kb, name=name[:255], type=kind,
        source_type=source_type, staleness_threshold_days=staleness_threshold_days,
        moderation_status=Moderation.PENDING if require_approval else Moderation.APPROVED,
        **fields)
    audit_record(action="knowledge_document.created", principal=principal, target=document,
                 metadata={"knowledge_base_id": kb.pk, "source_type": source_type})
    return document


def document_from_upload(*, principal: Principal, kb: KnowledgeBase, uploaded,
                         name: str | None, require_approval: bool = False,
                         staleness_threshold_days: int | None = None,
                         metadata: dict | None = None) -> Document:
    """Stores the bytes (10 MB at most, else 413) and answers `processing`; the worker
    decides the type from the content and extracts the text."""
    data = uploaded.read(extract.MAX_BYTES + 1)
    if len(data) > extract.MAX_BYTES:
        raise APIError("FILE_TOO_LARGE", "A knowledge-base document is 10 MB at most.",
                       details={"max_bytes": extract.MAX_BYTES})
    file_name = (uploaded.name or "document")[:255]
    try:  # the signature check is cheap; reading the text is the worker's
        guess = extract.detect_type(file_name, data)
    except extract.UnreadableDocument:
        guess = "unknown"  # the worker ends it `failed` with the reason
    with transaction.atomic():
        document = _new_document(
            principal=principal, kb=kb, name=name or file_name, kind=guess,
            source_type="upload", require_approval=require_approval,
            staleness_threshold_days=staleness_threshold_days, size_bytes=len(data),
            metadata=metadata or {})
        DocumentSource.objects.create(organization=principal.organization,
                                      document=document, file_name=file_name, data=data)
        _queue(document.pk)
    return document


def check_source_url(url: str) -> None:
    """Refuse at once a URL the fetch could never reach (scheme, credentials, a private
    or metadata address); the worker checks again when it fetches."""
    try:
        ssrf.check_url(url)
    except ssrf.UnsafeTarget as exc:
        raise validation_error("source_url", f"The URL cannot be fetched: {exc}.") from None


def document_from_url(*, principal: Principal, kb: KnowledgeBase, url: str,
                      name: str | None = None, metadata: dict | None = None,
                      require_approval: bool = False,
                      staleness_threshold_days: int | None = None) -> Document:
    check_source_url(url)
    with transaction.atomic():
        document = _new_document(
            principal=principal, kb=kb, name=name or url, kind="unknown", source_type="url",
            source_url=url, metadata=metadata or {}, require_approval=require_approval,
            staleness_threshold_days=staleness_threshold_days)
        _queue(document.pk)
    return document


def document_from_markdown(*, principal: Principal, kb: KnowledgeBase, name: str,
                           content: str, metadata: dict | None = None,
                           require_approval: bool = False,
                           staleness_threshold_days: int | None = None) -> Document:
    from . import services  # the one write path for documents whose text is given

    content = content.strip()
    with transaction.atomic():
        document = services.document_create(
            principal=principal, kb=kb, name=name, kind="markdown", source_type="markdown",
            content=content, size_bytes=len(content.encode()),
            require_approval=require_approval,
            staleness_threshold_days=staleness_threshold_days)
        if metadata:
            Document.objects.filter(pk=document.pk).update(metadata=metadata)
            document.metadata = metadata
    return document


# --- reindex and verify ------------------------------------------------------------------

def document_reindex(*, principal: Principal, document: Document) -> Document:
    """Chunks and vectors rebuilt from the document's text (a URL document is fetched
    again first). 409 while an indexing run is under way."""
    with transaction.atomic():
        locked = Document.objects.select_for_update().get(pk=document.pk)
        if locked.status == IndexStatus.PROCESSING:
            raise APIError("KNOWLEDGE_DOCUMENT_PROCESSING")
        locked.status, locked.failure_reason, locked.chunks_done = \
            IndexStatus.PROCESSING, "", 0
        locked.save(update_fields=["status", "failure_reason", "chunks_done", "updated_at"])
        audit_record(action="knowledge_document.reindexed", principal=principal,
                     target=locked)
        _queue(locked.pk, refetch=locked.source_type == "url")
    return locked


def document_verify(*, principal: Principal, document: Document) -> Document:
    """Stamps `last_verified_at`: a person confirmed the content is still right."""
    now = timezone.now()
    with transaction.atomic():
        Document.objects.filter(pk=document.pk).update(last_verified_at=now)
        audit_record(action="knowledge_document.verified", principal=principal,
                     target=document)
    document.last_verified_at = now
    return document


# --- the worker step ---------------------------------------------------------------------

def _fail(document: Document, reason: str) -> Document:
    Document.objects.filter(pk=document.pk).update(
        status=IndexStatus.FAILED, failure_reason=reason[:500], updated_at=timezone.now())
    document.refresh_from_db()
    return document


def fetch_url(url: str) -> tuple[bytes, str]:
    """The body of `url` (10 MB at most) and a file name hinting its type; raises
    UnreadableDocument with the reason when it cannot be fetched."""
    timeout = float(getattr(settings, "KNOWLEDGE_URL_FETCH_TIMEOUT", DEFAULT_FETCH_TIMEOUT))
    try:
        response = http.request("GET", url, timeout=timeout, max_body=extract.MAX_BYTES + 1,
                                headers={"Accept": "text/html, application/pdf, text/*, "
                                                   "*/*;q=0.5"})
    except http.OutboundError as exc:
        raise extract.UnreadableDocument(f"The URL could not be fetched ({exc}).") from None
    if 300 <= response.status_code < 400:
        raise extract.UnreadableDocument(
            f"The URL redirects (HTTP {response.status_code}) to "
            f"{(response.header('location') or '?')[:200]}; submit the final URL.")
    if response.status_code != 200:
        raise extract.UnreadableDocument(f"The URL answered HTTP {response.status_code}.")
    if len(response.body) > extract.MAX_BYTES:
        raise extract.UnreadableDocument("The URL's content is larger than 10 MB.")
    content_type = (response.header("content-type") or "").split(";")[0].strip().lower()
    name = _CONTENT_TYPE_NAMES.get(content_type)
    if name is None:  # the path's own extension, when it is one we read
        last = urlsplit(url).path.rsplit("/", 1)[-1]
        extension = extract.extension_of(last)
        known = extension in extract.TEXT_EXTENSIONS or extension in extract.BINARY_EXTENSIONS
        name = last if known else ""
    return response.body, name


def prepare(document: Document, *, refetch: bool = False) -> Document:
    """Gives the document its text when it has none yet (or a URL is fetched again):
    uploaded bytes are extracted, a URL is fetched then extracted. The document comes back
    `failed` with the reason when that is impossible; otherwise unchanged in status."""
    source = None
    if document.source_type == "upload":
        source = DocumentSource.objects.filter(document=document).first()
        if source is None:
            if document.content:
                return document  # extracted earlier: indexing again only
            return _fail(document, "The uploaded file is no longer stored; upload it again.")
        data, name = bytes(source.data), source.file_name
    elif document.source_type == "url" and (refetch or not document.content):
        try:
            data, name = fetch_url(document.source_url)
        except extract.UnreadableDocument as exc:
            return _fail(document, str(exc))
    else:
        return document
    try:
        kind = extract.detect_type(name, data, name_is_hint=document.source_type == "url")
        text = extract.extract_text(kind, data)
    except extract.UnreadableDocument as exc:
        Document.objects.filter(pk=document.pk).update(size_bytes=len(data))
        return _fail(document, str(exc))
    digest = hashlib.sha256(text.encode()).hexdigest()
    with transaction.atomic():
        changes = {"type": kind, "content": text, "size_bytes": len(data),
                   "content_sha256": digest, "updated_at": timezone.now()}
        if document.content and document.content_sha256 != digest:
            # A URL fetched again with new text: the old head is kept as a version.
            versions.snapshot(document, replaced_by="refetch", actor="system")
            changes["version"] = document.version + 1
        Document.objects.filter(pk=document.pk).update(**changes)
        if source is not None:  # the text is what is kept; the bytes are not needed again
            DocumentSource.objects.filter(document=document).delete()
    document.refresh_from_db()
    return document


# --- help-center import ------------------------------------------------------------------

def import_help_center(*, principal: Principal, subdomain: str, provider: str, locale: str,
                       name_prefix: str = "", max_articles: int = 250,
                       api_key: str = "") -> dict:
    """Reads the articles (outside any transaction), then creates a document per new
    article and updates those whose text changed (matched on `<provider>:<article id>`);
    unchanged ones are left as they are. Each created or changed document is indexed in
    the background. A help center that cannot be read answers 502 and writes nothing."""
    from . import helpcenter

    sandbox = bool(principal.organization.sandbox)
    if not sandbox and provider in helpcenter.KEYED_PROVIDERS and not api_key:
        raise validation_error("api_key", f"A {provider} import needs `api_key`.")
    try:
        articles = helpcenter.read_articles(
            sandbox=sandbox, provider=provider,
            subdomain=subdomain, locale=locale, max_articles=max_articles, api_key=api_key)
    except helpcenter.HelpCenterError as exc:
        raise APIError("KNOWLEDGE_HELP_CENTER_UNAVAILABLE", str(exc),
                       details={"provider": provider, "subdomain": subdomain}) from None
    kb = org_kb(principal)
    texts = {}
    for article in articles:
        body = extract.html_to_text(article.html) if article.html else ""
        texts[f"{provider}:{article.article_id}"[:200]] = (
            article, f"# {article.title}\n\n{body}".strip())
    created: list[Document] = []
    updated: list[Document] = []
    with transaction.atomic():
        existing = {d.external_id: d for d in Document.objects.filter(
            knowledge_base=kb, external_id__in=list(texts)).select_for_update()}
        for external_id, (article, text) in texts.items():
            digest = hashlib.sha256(text.encode()).hexdigest()
            metadata = {"provider": provider, "subdomain": subdomain,
                        "locale": article.locale, "article_id": article.article_id,
                        "article_updated_at": article.updated_at}
            document = existing.get(external_id)
            if document is None:
                created.append(Document(
                    organization=principal.organization, knowledge_base=kb,
                    name=(name_prefix + article.title)[:255], type="html",
                    source_type="help_center", source_url=article.url[:2048],
                    external_id=external_id, metadata=metadata, content=text,
                    content_sha256=digest, size_bytes=len(article.html.encode())))
            elif document.content_sha256 != digest:
                # The article changed: its old text is kept as a version first.
                versions.snapshot(document, replaced_by="import",
                                  actor=principal.actor_id)
                document.version += 1
                document.name = (name_prefix + article.title)[:255]
                document.content, document.content_sha256 = text, digest
                document.size_bytes, document.metadata = len(article.html.encode()), metadata
                document.status, document.failure_reason = IndexStatus.PROCESSING, ""
                document.source_url = article.url[:2048]
                document.updated_at = timezone.now()  # bulk_update skips auto_now
                updated.append(document)
        Document.objects.bulk_create(created)
        Document.objects.bulk_update(updated, ["version", "name", "content", "content_sha256",
                                               "size_bytes", "metadata", "status",
                                               "failure_reason", "source_url", "updated_at"])
        audit_record(action="knowledge_base.help_center_imported", principal=principal,
                     target=kb, metadata={"provider": provider, "subdomain": subdomain,
                                          "locale": locale, "found": len(articles),
                                          "created": len(created), "updated": len(updated)})
        for document in [*created, *updated]:
            _queue(document.pk)
    return {"knowledge_base_id": kb.pk, "provider": provider, "subdomain": subdomain,
            "locale": locale, "sandbox": sandbox,
            "articles_found": len(articles), "created": len(created),
            "updated": len(updated), "unchanged": len(texts) - len(created) - len(updated),
            "documents": [*created, *updated]}
