"""Contact CSV import: upload, column mapping, and a background job with progress.

1. `import_upload` checks the CSV (UTF-8, a header row, at most `IMPORT_MAX_ROWS` data
   rows and `IMPORT_MAX_BYTES`), stores it as a `StoredFile` (purpose `contact_import`)
   and answers its preview: header, a few sample rows, the row count and a suggested
   mapping from the header names.
2. `import_job_create` validates a mapping (CSV column -> `first_name`, `last_name`,
   `phone`, `email`, `tags`, `custom:<key>`, or "" to skip) and queues the job.
3. `import_job_run` is the task's unit of work: it processes the next `max_rows` rows
   under the job's row lock and records the progress when the chunk commits, so a poller
   sees `rows_done` move chunk by chunk and a redelivered task never runs a chunk twice.
   Each row goes through `services.contact_create` (the same normalization, uniqueness,
   audit and event as `POST /contacts`) in its own savepoint: a refused row (invalid
   phone, duplicate email...) is counted in `failed_count` with its line and reason.
"""

from __future__ import annotations

import csv
import io
import logging
import re
from collections.abc import Iterator
from contextlib import closing
from dataclasses import dataclass, field
from typing import Any

from django.core.files.storage import default_storage
from django.core.files.uploadedfile import UploadedFile
from django.db import transaction
from django.utils import timezone

from platform_core.audit.services import audit_record
from platform_core.errors import APIError, validation_error
from platform_core.events.bus import emit
from platform_core.files.models import StoredFile
from platform_core.files.services import file_upload
from platform_core.identity.principal import Principal

from . import services
from .models import ExportStatus, ImportJob
from .normalize import CUSTOM_FIELD_KEY

logger = logging.getLogger("contacts.imports")

FILE_PURPOSE = "contact_import"
IMPORT_MAX_ROWS = 10_000
IMPORT_MAX_BYTES = 5 * 1024 * 1024
IMPORT_MAX_COLUMNS = 120
IMPORT_MAX_ERRORS = 100  # row errors kept with their reason (all are counted)
CHUNK_ROWS = 250  # rows per task run; progress is recorded after each chunk
SAMPLE_ROWS = 3
FIELDS = ("first_name", "last_name", "phone", "email", "tags")
CUSTOM_PREFIX = "custom:"
_TAG_SPLIT = re.compile(r"[;,|]")
_SUGGEST = {
    "first_name": {"first_name", "firstname", "first", "given_name", "givenname"},
    "last_name": {"last_name", "lastname", "last", "surname", "family_name", "familyname"},
    "phone": {"phone", "phone_number", "phonenumber", "mobile", "cell", "msisdn", "tel"},
    "email": {"email", "email_address", "emailaddress", "e_mail", "mail"},
    "tags": {"tags", "tag", "labels"},
}


@dataclass(frozen=True)
class ImportPreview:
    file_id: str
    filename: str
    header: list[str]
    samples: list[list[str]]
    rows: int
    suggested: dict[str, str] = field(default_factory=dict)


def _text_rows(handle) -> Iterator[list[str]]:
    """CSV rows of a binary file (UTF-8, an optional BOM); blank lines skipped."""
    text = io.TextIOWrapper(handle, encoding="utf-8-sig", newline="")
    try:
        for row in csv.reader(text):
            if any(cell.strip() for cell in row):
                yield row
    except UnicodeDecodeError:
        raise validation_error("file", "The file is not UTF-8 text.") from None
    except csv.Error as exc:
        raise validation_error("file", f"The file is not a readable CSV ({exc}).") from None
    finally:
        text.detach()


def _check_header(header: list[str]) -> list[str]:
    header = [cell.strip() for cell in header]
    if not any(header):
        raise validation_error("file", "The first row must name the columns.")
    if len(header) > IMPORT_MAX_COLUMNS:
        raise validation_error("file", f"At most {IMPORT_MAX_COLUMNS} columns.")
    if len(set(header)) != len(header):
        raise validation_error("file", "Two columns have the same name.")
    return header


def suggest_target(column: str) -> str:
    """A mapping guess from a header name ("E-mail" -> email, "plan" -> custom:plan)."""
    key = re.sub(r"[^a-z0-9]+", "_", column.strip().lower()).strip("_")
    for target, names in _SUGGEST.items():
        if key in names:
            return target
    return f"{CUSTOM_PREFIX}{key}" if key and CUSTOM_FIELD_KEY.fullmatch(key) else ""


def _preview(stored: StoredFile) -> ImportPreview:
    with default_storage.open(stored.storage_name, "rb") as handle, \
            closing(_text_rows(handle)) as rows:
        header = _check_header(next(rows, []))
        samples: list[list[str]] = []
        count = 0
        for row in rows:
            count += 1
            if count > IMPORT_MAX_ROWS:
                raise APIError("IMPORT_TOO_LARGE", details={"limit": IMPORT_MAX_ROWS})
            if len(samples) < SAMPLE_ROWS:
                samples.append(row)
    if not count:
        raise validation_error("file", "The file has a header but no rows.")
    return ImportPreview(file_id=stored.pk, filename=stored.filename, header=header,
                         samples=samples, rows=count,
                         suggested={c: suggest_target(c) for c in header})


def import_upload(*, principal: Principal, uploaded: UploadedFile, request=None
                  ) -> ImportPreview:
    """Store an uploaded CSV and answer its preview; a file that is not a usable CSV is
    refused (422) and not kept."""
    if uploaded.size is not None and uploaded.size > IMPORT_MAX_BYTES:
        raise validation_error("file", f"The file is larger than "
                                       f"{IMPORT_MAX_BYTES // (1024 * 1024)} MB.")
    stored = file_upload(principal=principal, uploaded=uploaded, purpose=FILE_PURPOSE,
                         request=request)
    try:
        return _preview(stored)
    except APIError:
        default_storage.delete(stored.storage_name)
        stored.delete()
        raise


def import_preview(*, organization, file_id: str) -> ImportPreview:
    """The preview of a CSV already uploaded for an import (the mapping form re-shown)."""
    stored = StoredFile.objects.for_organization(organization).filter(
        pk=file_id, purpose=FILE_PURPOSE).first()
    if stored is None:
        raise validation_error("file_id", "No uploaded import file with this id.")
    return _preview(stored)


def clean_mapping(mapping: dict[str, str], header: list[str]) -> dict[str, str]:
    """Only mapped columns; every target valid and used once; something identifying."""
    cleaned: dict[str, str] = {}
    used: set[str] = set()
    for column, raw in mapping.items():
        target = (raw or "").strip()
        if not target:
            continue
        if column not in header:
            raise validation_error(f"mapping.{column}", "No such column in the file.")
        if target.startswith(CUSTOM_PREFIX):
            key = target[len(CUSTOM_PREFIX):]
            if not CUSTOM_FIELD_KEY.fullmatch(key):
                raise validation_error(
                    f"mapping.{column}",
                    "A custom-field key is 1-64 letters, digits, `_` or `-`.")
        elif target not in FIELDS:
            raise validation_error(f"mapping.{column}", f"Unknown field {target!r}.")
        if target in used:
            raise validation_error(f"mapping.{column}", f"{target} is mapped twice.")
        used.add(target)
        cleaned[column] = target
    if not used & {"first_name", "last_name", "phone", "email"}:
        raise validation_error("mapping", "Map at least a name, phone or email column.")
    return cleaned


def import_job_create(*, principal: Principal, file_id: str, mapping: dict[str, str],
                      request=None) -> ImportJob:
    """Queue the import of an uploaded CSV with a column mapping; the task starts after
    commit."""
    organization = principal.organization
    preview = import_preview(organization=organization, file_id=file_id)
    cleaned = clean_mapping(mapping, preview.header)
    job = ImportJob(organization=organization, file_id=file_id, filename=preview.filename,
                    mapping=cleaned, rows_total=preview.rows, created_by=principal.actor_id)
    with transaction.atomic():
        job.save(force_insert=True)
        audit_record(action="contact.import_requested", principal=principal,
                     organization=organization, target=job, request=request,
                     metadata={"file_id": file_id, "rows": preview.rows, "mapping": cleaned})
        transaction.on_commit(lambda: enqueue(job))
    return job


def enqueue(job: ImportJob) -> None:
    from .tasks import run_contact_import

    try:
        run_contact_import.delay(job.pk, job.organization_id)
    except Exception as exc:  # broker down: say so instead of leaving the job queued
        logger.exception("could not enqueue import %s", job.pk)
        _fail(job, f"could not be queued: {type(exc).__name__}")


def _fail(job: ImportJob, message: str) -> None:
    with transaction.atomic():
        updated = (ImportJob.objects.for_organization(job.organization).filter(pk=job.pk)
                   .exclude(status=ExportStatus.SUCCEEDED)
                   .update(status=ExportStatus.FAILED, error=message[:500],
                           finished_at=timezone.now()))
        if updated:
            emit(organization=job.organization, type="contact.import.failed",
                 data={"import_id": job.pk, "error": message[:500]})


def _row_values(row: list[str], header: list[str], mapping: dict[str, str]) -> dict[str, Any]:
    cells = dict(zip(header, row, strict=False))
    values: dict[str, Any] = {"custom_fields": {}}
    for column, target in mapping.items():
        cell = (cells.get(column) or "").strip()
        if target.startswith(CUSTOM_PREFIX):
            if cell:
                values["custom_fields"][target[len(CUSTOM_PREFIX):]] = cell
        elif target == "tags":
            values["tags"] = [t.strip() for t in _TAG_SPLIT.split(cell) if t.strip()]
        else:
            values[target] = cell
    return values


def _row_error(line: int, error: APIError) -> dict[str, Any]:
    issues = (error.details or {}).get("issues") or []
    where = issues[0].get("field") if issues else (error.details or {}).get("field")
    message = error.message + (f" ({where})" if where else "")
    return {"row": line, "code": error.code, "message": message[:300]}


def import_job_run(*, organization, job_id: str, max_rows: int = CHUNK_ROWS
                   ) -> ImportJob | None:
    """Process the next `max_rows` rows of the job; answers the job as committed, or None
    when another run holds it (or it is gone): that run carries the job on, so the caller
    must not queue a second chain. A finished job is answered untouched."""
    jobs = ImportJob.objects.for_organization(organization)
    try:
        with transaction.atomic():
            job = (jobs.select_for_update(skip_locked=True, of=("self",))
                   .select_related("file").filter(pk=job_id).first())
            if job is None:
                return None
            if job.finished:
                return job
            if job.file is None:
                raise APIError("NOT_FOUND", "The uploaded file is gone.")
            if job.status == ExportStatus.QUEUED:
                job.status, job.started_at = ExportStatus.RUNNING, timezone.now()
            created, errors = _run_chunk(job, max_rows)
            job.created_count += created
            job.failed_count += len(errors)
            job.errors = (job.errors + errors)[:IMPORT_MAX_ERRORS]
            if job.rows_done >= job.rows_total:
                job.status, job.finished_at = ExportStatus.SUCCEEDED, timezone.now()
                emit(organization=organization, type="contact.import.completed",
                     data={"import_id": job.pk, "rows": job.rows_done,
                           "created": job.created_count, "failed": job.failed_count})
            job.save(update_fields=["status", "started_at", "finished_at", "rows_done",
                                    "created_count", "failed_count", "errors"])
    except Exception as exc:
        logger.exception("contact import %s failed", job_id)
        job = jobs.filter(pk=job_id).first()
        if job is not None:
            message = exc.message if isinstance(exc, APIError) else type(exc).__name__
            _fail(job, f"Import failed: {message}")
    return jobs.filter(pk=job_id).first()


def _run_chunk(job: ImportJob, max_rows: int) -> tuple[int, list[dict[str, Any]]]:
    """Create the contacts of rows rows_done+1 .. rows_done+max_rows; moves rows_done."""
    created, errors = 0, []
    start, stop = job.rows_done, min(job.rows_done + max_rows, job.rows_total)
    # closing(): a chunk stops reading mid-file; the reader lets go before the file closes.
    with default_storage.open(job.file.storage_name, "rb") as handle, \
            closing(_text_rows(handle)) as rows:
        header = _check_header(next(rows, []))
        for index, row in enumerate(rows):
            if index < start:
                continue
            if index >= stop:
                break
            values = _row_values(row, header, job.mapping)
            try:
                with transaction.atomic():
                    # The job's own audit row names who asked; each row is the system's.
                    services.contact_create(organization=job.organization,
                                            principal=None, **values)
                created += 1
            except APIError as error:
                errors.append(_row_error(index + 2, error))  # line 1 is the header
    job.rows_done = stop
    return created, errors


def import_jobs_recent(*, organization, limit: int = 10):
    """The latest import jobs, newest first (one query)."""
    return ImportJob.objects.for_organization(organization).order_by("-id")[:limit]

