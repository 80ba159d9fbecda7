"""Writes of the connectors: create, update, delete, sync now, the scheduled drain and
the sync itself (incremental by content hash).

A sync lists the external pages, and for each one: a page never seen becomes a document of
the base through `services.document_create`; a page whose text hash changed replaces the
document's content through `versions.replace_content` (a version snapshot, then
re-indexing); an unchanged page is left alone (not rewritten, not re-embedded). Pages gone
from a complete listing have their documents removed. Failures end the sync `failed` with
the reason; the schedule moves on either way.
"""

from __future__ import annotations

import hashlib
import logging
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from knowledge import services, versions
from knowledge.models import Document, KnowledgeBase
from platform_core.audit.services import audit_record
from platform_core.errors import APIError
from platform_core.identity.principal import Principal
from platform_core.tenancy.models import Role

from . import adapters
from .models import Connector, ConnectorPage, ConnectorStatus, SyncStatus

log = logging.getLogger(__name__)
# A sync still `running` after this long is taken to be dead (a killed worker).
SYNC_LEASE = timedelta(minutes=30)
DRAIN_BATCH = 50
DRAIN_MAX_BATCHES = 20


def _max_pages() -> int:
    return int(getattr(settings, "KNOWLEDGE_CONNECTOR_MAX_PAGES", 1000))


def _queue_sync(connector_id: str) -> None:
    from .tasks import sync_connector

    transaction.on_commit(lambda: sync_connector.delay(connector_id))


def connector_create(*, principal: Principal, kb: KnowledgeBase, kind: str, name: str,
                     config: dict[str, Any], credentials: dict[str, Any],
                     sync_interval_minutes: int | None, status: str) -> Connector:
    """A scheduled connector is due at once: its first sync runs on the next drain."""
    with transaction.atomic():
        connector = Connector(organization=principal.organization, knowledge_base=kb,
                              kind=kind, name=name, config=config, status=status,
                              sync_interval_minutes=sync_interval_minutes,
                              next_sync_at=timezone.now() if sync_interval_minutes else None)
        connector.credentials = credentials
        connector.save()
        audit_record(action="knowledge_connector.created", principal=principal,
                     target=connector, metadata={"kind": kind, "knowledge_base_id": kb.pk})
    return connector


def connector_update(*, principal: Principal, connector: Connector,
                     changes: dict[str, Any]) -> Connector:
    with transaction.atomic():
        locked = Connector.objects.select_for_update().get(pk=connector.pk)
        fields = ["updated_at"]
        for name in ("name", "config", "status"):
            if name in changes:
                setattr(locked, name, changes[name])
                fields.append(name)
        if "credentials" in changes:
            locked.credentials = changes["credentials"]
            fields.append("credentials_encrypted")
        if "sync_interval_minutes" in changes:
            interval = changes["sync_interval_minutes"]
            locked.sync_interval_minutes = interval
            base = locked.last_synced_at or timezone.now()
            locked.next_sync_at = max(base + timedelta(minutes=interval), timezone.now()) \
                if interval else None
            fields += ["sync_interval_minutes", "next_sync_at"]
        locked.save(update_fields=fields)
        audit_record(action="knowledge_connector.updated", principal=principal,
                     target=locked, metadata={"fields": sorted(changes)})
    return locked


def connector_delete(*, principal: Principal, connector: Connector) -> None:
    """The documents the connector brought in stay in the base; its page records go."""
    with transaction.atomic():
        audit_record(action="knowledge_connector.deleted", principal=principal,
                     target=connector)
        connector.delete()


def request_sync(*, principal: Principal, connector: Connector) -> Connector:
    """Sync now (202): queued unless a sync is already queued or running."""
    with transaction.atomic():
        locked = Connector.objects.select_for_update().get(pk=connector.pk)
        if locked.status == ConnectorStatus.PAUSED:
            raise APIError("KNOWLEDGE_CONNECTOR_PAUSED")
        if not _busy(locked):
            locked.sync_status, locked.sync_started_at = SyncStatus.QUEUED, timezone.now()
            locked.save(update_fields=["sync_status", "sync_started_at", "updated_at"])
            audit_record(action="knowledge_connector.sync_requested", principal=principal,
                         target=locked)
            _queue_sync(locked.pk)
    return locked


def _busy(connector: Connector) -> bool:
    """Queued or running within the lease (`sync_started_at` is stamped at both)."""
    return (connector.sync_status in (SyncStatus.QUEUED, SyncStatus.RUNNING)
            and connector.sync_started_at is not None
            and timezone.now() - connector.sync_started_at < SYNC_LEASE)


def drain_due() -> int:
    """Beat: queue the sync of every active connector whose `next_sync_at` has come, in
    batches (rows locked with SKIP LOCKED, so two drains never take the same one)."""
    queued = 0
    for _ in range(DRAIN_MAX_BATCHES):
        with transaction.atomic():
            now = timezone.now()
            due = list(Connector.objects.dangerously_unscoped().select_for_update(
                skip_locked=True).filter(status=ConnectorStatus.ACTIVE,
                                         next_sync_at__lte=now).order_by("next_sync_at")
                [:DRAIN_BATCH])
            for connector in due:
                connector.next_sync_at = (now + timedelta(
                    minutes=connector.sync_interval_minutes)
                    if connector.sync_interval_minutes else None)
                if not _busy(connector):
                    connector.sync_status, connector.sync_started_at = SyncStatus.QUEUED, now
                    _queue_sync(connector.pk)
                    queued += 1
            Connector.objects.dangerously_unscoped().bulk_update(
                due, ["next_sync_at", "sync_status", "sync_started_at"])
        if len(due) < DRAIN_BATCH:
            break
    return queued


def _system_principal(connector: Connector) -> Principal:
    return Principal(kind="internal", organization=connector.organization, role=Role.ADMIN)


def sync(connector: Connector) -> Connector:
    """Run one sync of `connector` (in the tenant's context). Never raises for the
    external system's failures: they end the sync `failed` with the reason."""
    with transaction.atomic():
        locked = Connector.objects.select_for_update().get(pk=connector.pk)
        if locked.sync_status == SyncStatus.RUNNING and _busy(locked):
            return locked  # another worker holds it
        locked.sync_status, locked.sync_started_at = SyncStatus.RUNNING, timezone.now()
        locked.save(update_fields=["sync_status", "sync_started_at", "updated_at"])
    stats = {"pages": 0, "created": 0, "updated": 0, "unchanged": 0, "removed": 0}
    error = ""
    try:
        _sync_pages(locked, stats)
    except (adapters.ConnectorError, APIError) as exc:  # the vendor's verdict
        error = str(getattr(exc, "message", "") or exc) or exc.__class__.__name__
        log.info("connector %s sync failed: %s", locked.pk, error)
    except Exception as exc:  # noqa: BLE001 - an unreadable answer must not leave it running
        error = f"Unexpected answer from {locked.kind}: {exc.__class__.__name__}."
        log.exception("connector %s sync failed", locked.pk)
    now = timezone.now()
    Connector.objects.filter(pk=locked.pk).update(
        sync_status=SyncStatus.FAILED if error else SyncStatus.SUCCEEDED,
        last_synced_at=now, last_sync_error=error[:500], last_sync_stats=stats,
        updated_at=now)
    locked.refresh_from_db()
    return locked


def _sync_pages(connector: Connector, stats: dict[str, int]) -> None:
    principal = _system_principal(connector)
    known = {p.external_id: p for p in ConnectorPage.objects.filter(
        connector=connector).select_related("document")}
    seen: set[str] = set()
    complete = True
    for page in adapters.for_connector(connector).pages():
        if len(seen) >= _max_pages():
            complete = False  # a partial listing never removes anything
            break
        if page.external_id in seen:
            continue
        seen.add(page.external_id)
        stats["pages"] += 1
        digest = hashlib.sha256(page.text.encode()).hexdigest()
        record = known.get(page.external_id)
        if record is None:
            _create(connector, principal, page, digest)
            stats["created"] += 1
        elif record.content_sha256 != digest:
            versions.replace_content(principal=principal, document=record.document,
                                     content=page.text, name=page.title,
                                     replaced_by="sync")
            ConnectorPage.objects.filter(pk=record.pk).update(
                content_sha256=digest, title=page.title[:255], url=page.url[:2048],
                external_updated_at=page.updated_at[:40], synced_at=timezone.now())
            stats["updated"] += 1
        else:
            if page.title[:255] != record.title:  # a rename only: no new version
                Document.objects.filter(pk=record.document_id).update(name=page.title[:255])
                ConnectorPage.objects.filter(pk=record.pk).update(title=page.title[:255])
            stats["unchanged"] += 1
    if complete:
        for external_id, record in known.items():
            if external_id not in seen:
                services.document_delete(principal=principal, document=record.document)
                stats["removed"] += 1


def _create(connector: Connector, principal: Principal, page: adapters.Page,
            digest: str) -> None:
    with transaction.atomic():
        document = services.document_create(
            principal=principal, kb=connector.knowledge_base, name=page.title,
            kind="markdown", source_type="connector", content=page.text,
            size_bytes=len(page.text.encode()))
        ConnectorPage.objects.create(
            organization_id=connector.organization_id, connector=connector,
            document=document, external_id=page.external_id[:255], title=page.title[:255],
            url=page.url[:2048], content_sha256=digest,
            external_updated_at=page.updated_at[:40])
