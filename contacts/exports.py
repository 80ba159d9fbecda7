"""Contact exports: the streamed download (`POST /contacts/export`, at most 10,000 rows) and
the background job (`POST /contacts/bulk/export`).

Memory stays flat: rows come from `values_list(...).iterator(chunk_size=2000)` (a
server-side cursor on PostgreSQL) and pass one by one through `platform_core.exports`
(CSV, formula-injection safe) or openpyxl's write-only workbook (XLSX, spooled to a
temporary file); nothing builds a list of rows. The custom-field columns are the union of
keys of the exported rows, collected first with one query.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import tempfile
from collections.abc import Iterable, Iterator
from typing import IO, Any

from django.core.files import File
from django.core.files.storage import default_storage
from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone

from platform_core.audit.services import audit_record
from platform_core.errors import APIError, validation_error
from platform_core.events.bus import emit
from platform_core.events.models import iso_z
from platform_core.exports import stream_csv
from platform_core.files.models import StoredFile
from platform_core.identity.principal import Principal

from .models import Contact, ContactList, ExportFormat, ExportJob, ExportStatus
from .selectors import contacts_filtered, custom_field_keys

logger = logging.getLogger("contacts.exports")

EXPORT_MAX_ROWS = 10_000
CHUNK_SIZE = 2000
PROGRESS_EVERY = 2000  # rows between two progress writes of a background job
FILE_PURPOSE = "contact_export"
CONTENT_TYPES = {
    ExportFormat.CSV: "text/csv; charset=utf-8",
    ExportFormat.XLSX: "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
}
BASE_COLUMNS = ["id", "first_name", "last_name", "phone", "email", "tags", "created_at",
                "updated_at"]
_VALUE_FIELDS = ["id", "first_name", "last_name", "phone", "email", "tags", "created_at",
                 "updated_at", "custom_fields"]
_FILENAME_UNSAFE = re.compile(r"[^A-Za-z0-9._ -]+")


# --- Shared pieces ----------------------------------------------------------------------------


def parse_format(raw: str | None) -> str:
    value = (raw or ExportFormat.CSV).strip().lower()
    if value not in ExportFormat.values:
        raise validation_error("format", "format is csv or xlsx.", status=400)
    return value


def clean_filename(raw: str | None, fmt: str) -> str:
    """A safe download name: no path, conservative characters, the format's extension."""
    name = os.path.basename((raw or "").replace("\\", "/"))
    name = _FILENAME_UNSAFE.sub("_", name)[:200].strip(" ._")
    if not name:
        name = f"contacts-{timezone.now():%Y%m%d-%H%M%S}"
    extension = f".{fmt}"
    if not name.lower().endswith(extension):
        name += extension
    return name


def export_queryset(*, organization, filters: dict[str, Any]) -> QuerySet:
    """The contacts an export body selects, in id order. Bad filters: 422 before streaming."""
    list_id = filters.get("list_id") or None
    if list_id and not ContactList.objects.for_organization(organization).filter(
        pk=list_id
    ).exists():
        raise validation_error("list_id", "No list with this id.")
    try:
        queryset = contacts_filtered(
            Contact.objects.for_organization(organization),
            organization=organization,
            q=filters.get("q"),
            tags=filters.get("tags") or (),
            list_id=list_id,
            ids=filters.get("contact_ids"),
        )
    except APIError as exc:
        if exc.code == "VALIDATION_ERROR":  # `q` problems answer 422 in a body
            exc.status = 422
        raise
    return queryset.order_by("id")


def header_for(keys: list[str]) -> list[str]:
    return [*BASE_COLUMNS, *(f"custom_fields.{key}" for key in keys)]


def _cell(value: Any) -> Any:
    if isinstance(value, bool):
        return "true" if value else "false"
    return value


def export_rows(queryset: QuerySet, keys: list[str]) -> Iterator[list[Any]]:
    """One list per contact, streamed from a server-side cursor."""
    for (pk, first, last, phone, email, tags, created, updated, custom) in (
        queryset.values_list(*_VALUE_FIELDS).iterator(chunk_size=CHUNK_SIZE)
    ):
        custom = custom if isinstance(custom, dict) else {}
        yield [
            pk, first, last, phone, email, "; ".join(tags or []),
            iso_z(created), iso_z(updated),
            *(_cell(custom.get(key)) for key in keys),
        ]


def write_xlsx(target: IO[bytes], header: list[str], rows: Iterable[list[Any]]) -> None:
    """An XLSX workbook through openpyxl's write-only mode (rows are not kept in memory).

    Every text cell is typed as a string, so a value such as `=HYPERLINK(...)` is shown as
    text and never evaluated as a formula.
    """
    from openpyxl import Workbook
    from openpyxl.cell import WriteOnlyCell
    from openpyxl.cell.cell import ILLEGAL_CHARACTERS_RE

    workbook = Workbook(write_only=True)
    sheet = workbook.create_sheet("contacts")

    def cells(values: Iterable[Any]) -> list[Any]:
        out = []
        for value in values:
            if value is None:
                out.append(None)
            elif isinstance(value, bool | int | float):
                out.append(value)
            else:
                cell = WriteOnlyCell(sheet, value=ILLEGAL_CHARACTERS_RE.sub("", str(value)))
                cell.data_type = "s"
                out.append(cell)
        return out

    sheet.append(cells(header))
    for row in rows:
        sheet.append(cells(row))
    workbook.save(target)


def write_export(target: IO[bytes], fmt: str, header: list[str], rows: Iterable[list[Any]]) -> None:
    """Write a whole export to a binary file object."""
    if fmt == ExportFormat.XLSX:
        write_xlsx(target, header, rows)
        return
    for chunk in stream_csv(header, rows):
        target.write(chunk)


# --- The streamed export ------------------------------------------------------------------


def export_prepare(
    *, organization, principal: Principal, filters: dict[str, Any], fmt: str, filename: str,
    request=None,
) -> tuple[QuerySet, list[str], int]:
    """Validate, count (capped) and audit a streamed export; returns (queryset, header,
    rows). More than 10,000 rows: 422 EXPORT_TOO_LARGE (nothing streamed)."""
    queryset = export_queryset(organization=organization, filters=filters)
    rows = queryset.order_by()[: EXPORT_MAX_ROWS + 1].count()
    if rows > EXPORT_MAX_ROWS:
        raise APIError(
            "EXPORT_TOO_LARGE",
            details={"limit": EXPORT_MAX_ROWS, "bulk_export": "/api/v1/contacts/bulk/export"},
        )
    header = header_for(custom_field_keys(queryset))
    audit_record(
        action="contact.exported", principal=principal, organization=organization,
        target_type="contact", request=request,
        metadata={"format": fmt, "filename": filename, "rows": rows, "filters": filters},
    )
    return queryset, header, rows


# --- The background job -------------------------------------------------------------------


def export_job_create(
    *, organization, principal: Principal, filters: dict[str, Any], fmt: str, filename: str,
    request=None,
) -> ExportJob:
    """Queue a background export (the filters are validated now); the task starts after
    commit."""
    export_queryset(organization=organization, filters=filters)
    job = ExportJob(organization=organization, format=fmt, filename=filename, filters=filters,
                    created_by=principal.actor_id)
    with transaction.atomic():
        job.save(force_insert=True)
        audit_record(action="contact.export_requested", principal=principal,
                     organization=organization, target=job, request=request,
                     metadata={"format": fmt, "filters": filters})
        transaction.on_commit(lambda: _enqueue(job))
    return job


def _enqueue(job: ExportJob) -> None:
    from .tasks import run_contact_export

    try:
        run_contact_export.delay(job.pk, job.organization_id)
    except Exception as exc:  # broker down: the job cannot run, say so instead of hanging
        logger.exception("could not enqueue export %s", job.pk)
        _fail(job, f"could not be queued: {type(exc).__name__}")


def _storage_name(stored: StoredFile) -> str:
    extension = os.path.splitext(stored.filename)[1].lower()
    return f"files/{stored.organization_id}/{stored.pk}{extension}"


def _fail(job: ExportJob, message: str) -> None:
    """Mark the job failed (never after it succeeded) and emit the failure event."""
    with transaction.atomic():
        updated = (
            ExportJob.objects.for_organization(job.organization)
            .filter(pk=job.pk)
            .exclude(status=ExportStatus.SUCCEEDED)
            .update(status=ExportStatus.FAILED, error=message[:500], finished_at=timezone.now())
        )
        if updated:
            emit(organization=job.organization, type="contact.export.failed",
                 data={"export_id": job.pk, "error": message[:500]})


def export_job_run(*, organization, job_id: str) -> ExportJob | None:
    """Run one queued export to the end: the job ends `succeeded` with its file, or
    `failed` with nothing stored. A job not `queued` (already claimed) is left alone."""
    jobs = ExportJob.objects.for_organization(organization)
    claimed = jobs.filter(pk=job_id, status=ExportStatus.QUEUED).update(
        status=ExportStatus.RUNNING, started_at=timezone.now(), rows_done=0
    )
    job = jobs.filter(pk=job_id).select_related("organization").first()
    if not claimed or job is None:
        return job
    storage_name = None
    try:
        queryset = export_queryset(organization=organization, filters=job.filters or {})
        total = queryset.count()
        jobs.filter(pk=job.pk).update(rows_total=total)
        header = header_for(custom_field_keys(queryset))
        done = 0

        def counted(rows: Iterable[list[Any]]) -> Iterator[list[Any]]:
            nonlocal done
            for row in rows:
                yield row
                done += 1
                if done % PROGRESS_EVERY == 0:
                    jobs.filter(pk=job.pk).update(rows_done=done)

        stored = StoredFile(
            organization=organization, purpose=FILE_PURPOSE, filename=job.filename,
            content_type=CONTENT_TYPES[job.format], size=0, sha256="",
            created_by=job.created_by,
        )
        with tempfile.TemporaryFile() as spool:
            write_export(spool, job.format, header, counted(export_rows(queryset, header_keys(header))))
            stored.size = spool.tell()
            spool.seek(0)
            digest = hashlib.sha256()
            for block in iter(lambda: spool.read(1 << 20), b""):
                digest.update(block)
            stored.sha256 = digest.hexdigest()
            spool.seek(0)
            storage_name = default_storage.save(_storage_name(stored), File(spool))
        stored.storage_name = storage_name
        with transaction.atomic():
            stored.save(force_insert=True)
            jobs.filter(pk=job.pk).update(
                status=ExportStatus.SUCCEEDED, rows_done=done, rows_total=done, file=stored,
                finished_at=timezone.now(), error="",
            )
            emit(organization=organization, type="contact.export.completed",
                 data={"export_id": job.pk, "rows": done, "format": job.format,
                       "file_id": stored.pk, "filename": job.filename})
    except Exception as exc:
        logger.exception("contact export %s failed", job_id)
        if storage_name:
            try:
                default_storage.delete(storage_name)
            except Exception:
                logger.exception("could not delete the partial export %s", storage_name)
        _fail(job, f"Export failed: {type(exc).__name__}")
    return jobs.filter(pk=job_id).first()


def header_keys(header: list[str]) -> list[str]:
    prefix = "custom_fields."
    return [column[len(prefix):] for column in header if column.startswith(prefix)]
