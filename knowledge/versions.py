"""Immutable version snapshots of knowledge documents, diffs and rollback (Document 3,
2.2, 3 and 4.3).

The head lives on the `Document` (`version`, `content`); every content change first writes
the head being replaced as a `DocumentVersion` and then moves the head on (version + 1).
Snapshots keep their text up to KNOWLEDGE_VERSION_MAX_BYTES; above it only the hash and the
size remain, and a diff or rollback needing that text answers 422
KNOWLEDGE_VERSION_NOT_RETAINED.
"""

from __future__ import annotations

import difflib
import hashlib
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db import transaction

from platform_core.audit.services import audit_record
from platform_core.errors import APIError, validation_error
from platform_core.identity.principal import Principal

from . import services
from .models import Chunk, Document, DocumentVersion, IndexStatus

DIFF_CONTEXT_LINES = 3


def max_bytes() -> int:
    return int(getattr(settings, "KNOWLEDGE_VERSION_MAX_BYTES", 1024 * 1024))


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def snapshot(document: Document, *, replaced_by: str, actor: str) -> DocumentVersion:
    """Keep the document's current head as an immutable version (before it changes)."""
    data = document.content.encode()
    retained = len(data) <= max_bytes()
    return DocumentVersion.objects.create(
        organization_id=document.organization_id, document=document,
        version=document.version, name=document.name, type=document.type,
        size_bytes=len(data), content_sha256=document.content_sha256 or _sha256(
            document.content), content=document.content if retained else "",
        content_retained=retained, replaced_by=replaced_by, created_by=actor[:64])


def replace_content(*, principal: Principal, document: Document, content: str,
                    kind: str | None = None, name: str | None = None,
                    replaced_by: str = "update") -> Document:
    """Snapshot the head, make `content` the new head (version + 1) and re-index it through
    the indexing service. Identical content is not a change: nothing is written."""
    with transaction.atomic():
        locked = Document.objects.select_for_update().get(pk=document.pk)
        digest = _sha256(content)
        if digest == locked.content_sha256 and (name is None or name == locked.name):
            return locked
        if digest == locked.content_sha256:  # only the title moved: no new version
            locked.name = name[:255]
            locked.save(update_fields=["name", "updated_at"])
            return locked
        snapshot(locked, replaced_by=replaced_by, actor=principal.actor_id)
        previous = locked.version
        locked.version += 1
        locked.content, locked.content_sha256 = content, digest
        locked.size_bytes = len(content.encode())
        locked.type = kind or locked.type
        locked.name = (name or locked.name)[:255]
        locked.status, locked.failure_reason = IndexStatus.PROCESSING, ""
        locked.chunks_done = locked.chunks_total = 0
        locked.save(update_fields=["version", "content", "content_sha256", "size_bytes",
                                   "type", "name", "status", "failure_reason",
                                   "chunks_done", "chunks_total", "updated_at"])
        # The old head's chunks go now: they must not answer for the new content.
        Chunk.objects.filter(document=locked).delete()
        audit_record(action="knowledge_document.version_created", principal=principal,
                     target=locked, metadata={"reason": replaced_by, "from_version": previous,
                                              "to_version": locked.version})
        services._queue_indexing(locked.pk)
    return locked


def rollback(*, principal: Principal, document: Document, version: int) -> Document:
    """Section 3: the target's content must be retained; the current head is snapshotted
    first and the target's content becomes a new head version."""
    if version == document.version:
        raise validation_error("version", "That version is already the head.")
    target = DocumentVersion.objects.filter(document=document, version=version).first()
    if target is None:
        raise validation_error("version", "The document has no such version.")
    if not target.content_retained:
        raise APIError("KNOWLEDGE_VERSION_NOT_RETAINED",
                       details={"version": version, "size_bytes": target.size_bytes,
                                "max_bytes": max_bytes()})
    return replace_content(principal=principal, document=document, content=target.content,
                           kind=target.type, replaced_by="rollback")


# --- Reads ------------------------------------------------------------------------------


def head_entry(document: Document) -> dict[str, Any]:
    return {"version": document.version, "is_head": True, "name": document.name,
            "type": document.type, "size_bytes": len(document.content.encode()),
            "content_sha256": document.content_sha256, "content_retained": True,
            "replaced_by": None, "created_by": None, "superseded_at": None}


def snapshot_entry(snapshot: DocumentVersion) -> dict[str, Any]:
    return {"version": snapshot.version, "is_head": False, "name": snapshot.name,
            "type": snapshot.type, "size_bytes": snapshot.size_bytes,
            "content_sha256": snapshot.content_sha256,
            "content_retained": snapshot.content_retained,
            "replaced_by": snapshot.replaced_by, "created_by": snapshot.created_by,
            "superseded_at": snapshot.created_at}


@dataclass
class Diff:
    from_version: int
    to_version: int
    added: int = 0
    removed: int = 0
    unchanged: int = 0
    hunks: list[dict[str, Any]] = field(default_factory=list)
    computed_at: datetime | None = None


def _content_of(document: Document, version: int, param: str) -> str:
    if version == document.version:
        text = document.content
        if len(text.encode()) > max_bytes():
            raise APIError("KNOWLEDGE_VERSION_NOT_RETAINED",
                           details={"version": version, "max_bytes": max_bytes()})
        return text
    snapshot = DocumentVersion.objects.filter(document=document, version=version).only(
        "content", "content_retained", "size_bytes").first()
    if snapshot is None:
        raise validation_error(param, "The document has no such version.")
    if not snapshot.content_retained:
        raise APIError("KNOWLEDGE_VERSION_NOT_RETAINED",
                       details={"version": version, "size_bytes": snapshot.size_bytes,
                                "max_bytes": max_bytes()})
    return snapshot.content


def diff(document: Document, from_version: int, to_version: int) -> Diff:
    """Line counts from difflib's opcodes and unified hunks (`+`, `-`, ` ` lines)."""
    old = _content_of(document, from_version, "from").splitlines()
    new = _content_of(document, to_version, "to").splitlines()
    result = Diff(from_version=from_version, to_version=to_version)
    matcher = difflib.SequenceMatcher(a=old, b=new, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            result.unchanged += i2 - i1
        else:
            result.removed += i2 - i1
            result.added += j2 - j1
    for group in matcher.get_grouped_opcodes(DIFF_CONTEXT_LINES):
        first, last = group[0], group[-1]
        header = (f"@@ -{_range(first[1], last[2])} +{_range(first[3], last[4])} @@")
        lines: list[str] = []
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                lines += [" " + line for line in old[i1:i2]]
                continue
            lines += ["-" + line for line in old[i1:i2]]
            lines += ["+" + line for line in new[j1:j2]]
        result.hunks.append({"header": header, "lines": lines})
    return result


def _range(start: int, stop: int) -> str:
    """A unified-diff range (difflib's format): `start,length`, 1-based."""
    length = stop - start
    if length == 1:
        return str(start + 1)
    return f"{start if length == 0 else start + 1},{length}"
