"""Writes on recordings: register, fetch, legal hold, seal, share, retention sweep."""

from __future__ import annotations

import logging
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.core.files.uploadedfile import UploadedFile
from django.db import transaction
from django.utils import timezone

from platform_core.audit.services import audit_record
from platform_core.errors import APIError
from platform_core.events.bus import emit
from platform_core.identity.principal import Principal
from platform_core.net import http

from . import chain, conf, media, shares
from .models import (
    Recording,
    RecordingChain,
    RecordingKind,
    RecordingSeal,
    RecordingStatus,
    new_nonce,
)

logger = logging.getLogger("recordings")


def recording_data(recording: Recording) -> dict[str, Any]:
    return {"id": recording.pk, "kind": recording.kind, "status": recording.status,
            "content_sha256": recording.content_sha256 or None}


def _chunks(uploaded: UploadedFile):
    yield from uploaded.chunks()


def recording_register_upload(*, principal: Principal, uploaded: UploadedFile, kind: str,
                              session_id: str = "", call_sid: str = "",
                              duration_seconds: int | None = None,
                              metadata: dict | None = None, request=None) -> Recording:
    """Store an uploaded recording, encrypted, hashed while it streams to storage."""
    recording = Recording(
        organization=principal.organization, kind=kind, source="upload",
        status=RecordingStatus.COMPLETED, filename=(uploaded.name or "recording")[:255],
        content_type=(uploaded.content_type or "application/octet-stream")[:255],
        session_id=session_id, call_sid=call_sid, duration_seconds=duration_seconds,
        metadata=metadata or {}, created_by=principal.actor_id)
    recording.content_sha256, recording.size = media.store(recording, _chunks(uploaded))
    try:
        with transaction.atomic():
            recording.save(force_insert=True)
            _created(recording, principal, request)
    except BaseException:
        media.delete(recording.storage_name)
        raise
    return recording


def recording_register_url(*, principal: Principal | None, organization=None, media_url: str,
                           kind: str, content_sha256: str = "", session_id: str = "",
                           call_sid: str = "", duration_seconds: int | None = None,
                           metadata: dict | None = None, request=None) -> Recording:
    """Record a recording kept at `media_url`; a task fetches, checks and encrypts it."""
    organization = organization or principal.organization
    recording = Recording(
        organization=organization, kind=kind, source="url", media_url=media_url,
        status=RecordingStatus.PROCESSING, content_sha256=content_sha256.lower(),
        session_id=session_id, call_sid=call_sid, duration_seconds=duration_seconds,
        metadata=metadata or {}, created_by=principal.actor_id if principal else "")
    with transaction.atomic():
        recording.save(force_insert=True)
        _created(recording, principal, request)
        from .tasks import fetch_recording_media

        pk = recording.pk
        transaction.on_commit(lambda: fetch_recording_media.delay(pk))
    return recording


def _created(recording: Recording, principal: Principal | None, request) -> None:
    audit_record(action="recording.created", organization=recording.organization,
                 principal=principal, target=recording, request=request,
                 metadata={"kind": recording.kind, "source": recording.source})
    emit(organization=recording.organization, type="recording.created",
         data={"recording": recording_data(recording)})


def _fetch_limit() -> int:
    return int(conf.setting("RECORDINGS_FETCH_MAX_BYTES", settings.FILE_UPLOAD_MAX_BYTES))


def recording_fetch_media(recording: Recording) -> Recording:
    """Download `media_url` (SSRF-checked, size-capped), verify the declared hash, encrypt."""
    if recording.status != RecordingStatus.PROCESSING:
        return recording
    limit = _fetch_limit()
    failure = ""
    try:
        answer = http.request("GET", recording.media_url, timeout=30.0, max_body=limit + 1)
    except http.OutboundError as exc:
        failure = f"fetch failed ({exc.kind}): {exc.message}"[:500]
    else:
        if answer.status_code != 200:
            failure = f"fetch answered HTTP {answer.status_code}"
        elif len(answer.body) > limit:
            failure = f"media larger than {limit} bytes"
    if not failure:
        digest, size = media.store(recording, [answer.body])
        if recording.content_sha256 and digest != recording.content_sha256:
            media.delete(recording.storage_name)
            recording.storage_name = ""
            failure = "the fetched media does not match content_sha256"
        else:
            recording.content_sha256, recording.size = digest, size
            recording.content_type = (answer.header("content-type") or
                                      "application/octet-stream")[:255]
    with transaction.atomic():
        if failure:
            recording.status, recording.failure_reason = RecordingStatus.FAILED, failure
            recording.wrapped_key = recording.key_ref = ""
        else:
            recording.status = RecordingStatus.COMPLETED
        recording.save()
        emit(organization=recording.organization,
             type="recording.failed" if failure else "recording.completed",
             data={"recording": recording_data(recording),
                   **({"reason": failure} if failure else {})})
    return recording


def legal_hold_set(*, principal: Principal, recording: Recording, hold: bool, reason: str,
                   request=None) -> Recording:
    with transaction.atomic():
        recording.legal_hold = hold
        recording.legal_hold_reason = reason
        recording.legal_hold_updated_by = principal.actor_id
        recording.legal_hold_updated_at = timezone.now()
        recording.save(update_fields=["legal_hold", "legal_hold_reason", "legal_hold_updated_by",
                                      "legal_hold_updated_at", "updated_at"])
        audit_record(action="recording.legal_hold_set" if hold else
                     "recording.legal_hold_released", principal=principal, target=recording,
                     request=request, metadata={"hold": hold, "reason": reason})
    return recording


def seal(*, principal: Principal, recording: Recording, content_sha256: str | None,
         encryption_algorithm: str | None, request=None) -> RecordingSeal:
    """Append the recording to the organization's chain (one seal per recording)."""
    digest = (content_sha256 or recording.content_sha256 or "").lower()
    if not digest:
        raise APIError("RECORDING_INTEGRITY_MISSING_CONTENT_HASH")
    organization = recording.organization
    with transaction.atomic():
        RecordingChain.objects.get_or_create(organization=organization,
                                             defaults={"head_hash": chain.GENESIS})
        head = RecordingChain.objects.select_for_update().get(organization=organization)
        if RecordingSeal.objects.filter(recording=recording).exists():
            raise APIError("RECORDING_INTEGRITY_ALREADY_SEALED")
        link = RecordingSeal(
            organization=organization, recording=recording, recording_ref=recording.pk,
            sequence=head.length + 1, content_sha256=digest, prev_hash=head.head_hash,
            canonicalization_version=chain.VERSION, kms_provider=recording.kms_provider,
            kms_key_fingerprint=recording.kms_key_fingerprint,
            encryption_algorithm=encryption_algorithm or recording.encryption_algorithm,
            sealed_by=principal.actor_id, sealed_at=timezone.now())
        link.current_hash = chain.seal_hash(link)
        link.save(force_insert=True)
        head.length, head.head_hash = link.sequence, link.current_hash
        head.save()
        audit_record(action="recording.sealed", principal=principal, target=recording,
                     request=request, metadata={"sequence": link.sequence,
                                                "prev_hash": link.prev_hash,
                                                "current_hash": link.current_hash,
                                                "content_sha256": digest})
        emit(organization=organization, type="recording.sealed",
             data={"recording_id": recording.pk, "current_hash": link.current_hash})
    return link


def share_create(*, principal: Principal, recording: Recording, seconds: int | None,
                 request=None) -> shares.ShareLink:
    if recording.kind != RecordingKind.VIDEO or recording.status != RecordingStatus.COMPLETED \
            or not recording.has_media:
        raise APIError("RECORDING_SHARE_NOT_SHAREABLE", details={
            "kind": recording.kind, "status": recording.status})
    shared = shares.link(recording, shares.clamp(seconds))
    audit_record(action="recording.shared", principal=principal, target=recording,
                 request=request, metadata={"expires_at": shared.expires_at.isoformat()})
    return shared


def share_revoke(*, principal: Principal, recording: Recording, request=None) -> Recording:
    with transaction.atomic():
        recording.share_nonce = new_nonce()
        recording.save(update_fields=["share_nonce", "updated_at"])
        audit_record(action="recording.shares_revoked", principal=principal, target=recording,
                     request=request)
    return recording


def retention_sweep(*, now=None, batch: int | None = None) -> int:
    """Delete recordings older than the retention, batch by batch, except those on legal
    hold and every recording of a session that has a held recording. Sealed links stay."""
    now = now or timezone.now()
    cutoff = now - timedelta(days=conf.retention_days())
    batch = batch or conf.sweep_batch()
    unscoped = Recording.objects.dangerously_unscoped()
    held_sessions = unscoped.filter(legal_hold=True).exclude(session_id="").values(
        "organization_id", "session_id")
    deleted = 0
    last_pk = ""
    while True:
        rows = list(unscoped.filter(legal_hold=False, created_at__lt=cutoff, pk__gt=last_pk)
                    .order_by("pk").values("pk", "organization_id", "session_id",
                                           "storage_name")[:batch])
        if not rows:
            return deleted
        last_pk = rows[-1]["pk"]
        sessions = {(r["organization_id"], r["session_id"]) for r in rows if r["session_id"]}
        kept: set[tuple[str, str]] = set()
        if sessions:
            kept = {(h["organization_id"], h["session_id"]) for h in held_sessions.filter(
                session_id__in={s for _, s in sessions})}
        doomed = [r for r in rows if (r["organization_id"], r["session_id"]) not in kept]
        if doomed:
            with transaction.atomic():
                unscoped.filter(pk__in=[r["pk"] for r in doomed]).delete()
                names = [r["storage_name"] for r in doomed]
                transaction.on_commit(lambda names=names: [media.delete(n) for n in names])
            deleted += len(doomed)
