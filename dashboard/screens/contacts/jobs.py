"""Background jobs of the Contacts screen: CSV import (upload, column mapping, progress)
and export (start, progress, download).

Import: `contacts.imports` (upload and preview, `import_job_create`, the chunked task).
Export: `contacts.exports.export_job_create`, the service of `POST /contacts/bulk/export`,
with the same body serializer, scope and roles (`EXPORT_ROLES`); progress is the API's
`ExportJobSerializer.progress`. A job page polls its progress fragment every second
(`hx-trigger="every 1s"`) until the job has finished; the finished fragment carries no
trigger, so the polling stops by itself.
"""

from __future__ import annotations

from django.core.files.storage import default_storage
from django.http import FileResponse, HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from contacts import exports, imports
from contacts.api.serializers import BulkExportSerializer, ExportJobSerializer
from contacts.api.views import EXPORT_ROLES
from contacts.models import ContactList, ExportJob, ExportStatus, ImportJob
from dashboard.views.base import DashboardView, error_response, validated
from platform_core.errors import APIError
from platform_core.identity.principal import Principal

READ, WRITE = "contacts:read", "contacts:write"
TARGETS = [("", "Skip this column"), ("first_name", "First name"), ("last_name", "Last name"),
           ("phone", "Phone"), ("email", "Email"), ("tags", "Tags (separated by ; , or |)")]


def can_export(principal: Principal) -> bool:
    return principal.role in EXPORT_ROLES


def require_export_role(principal: Principal) -> None:
    """`required_roles` of the export endpoints, on top of the scope."""
    if not can_export(principal):
        raise APIError("INSUFFICIENT_PERMISSIONS", "Your role does not allow exports.",
                       details={"required_roles": sorted(EXPORT_ROLES)})


# --- Import -----------------------------------------------------------------------------


def _mapping_context(preview: imports.ImportPreview, *, errors=(), chosen=None) -> dict:
    chosen = chosen or preview.suggested
    columns = []
    for index, column in enumerate(preview.header):
        target = chosen.get(column, "")
        custom = target[len(imports.CUSTOM_PREFIX):] if target.startswith(
            imports.CUSTOM_PREFIX) else ""
        columns.append({"index": index, "name": column, "target": target, "custom": custom,
                        "samples": [row[index] if index < len(row) else ""
                                    for row in preview.samples]})
    return {"preview": preview, "columns": columns, "targets": TARGETS, "errors": errors,
            "section": "import"}


class ImportView(DashboardView):
    """GET: the upload form and recent imports. POST: upload a CSV, answer the mapping."""

    required_scopes = {"GET": READ, "POST": WRITE}

    def get(self, request: HttpRequest) -> HttpResponse:
        return render(request, "dashboard/contacts/import.html", {
            "jobs": imports.import_jobs_recent(organization=self.principal.organization),
            "max_rows": imports.IMPORT_MAX_ROWS, "section": "import"})

    def post(self, request: HttpRequest) -> HttpResponse:
        uploaded = request.FILES.get("file")
        if uploaded is None:
            raise APIError("VALIDATION_ERROR", "Choose a CSV file to upload.", status=422)
        preview = imports.import_upload(principal=self.principal, uploaded=uploaded,
                                        request=request)
        return render(request, "dashboard/contacts/import_mapping.html",
                      _mapping_context(preview))


class ImportStartView(DashboardView):
    """POST the mapping (`column`/`target`/`custom` repeated per CSV column): queue the job
    and go to its progress page. A bad mapping re-shows the form with the reason."""

    required_scopes = {"POST": WRITE}

    def post(self, request: HttpRequest) -> HttpResponse:
        data = request.POST
        file_id = data.get("file_id", "")
        mapping: dict[str, str] = {}
        for column, target, custom in zip(data.getlist("column"), data.getlist("target"),
                                          data.getlist("custom"), strict=False):
            mapping[column] = (f"{imports.CUSTOM_PREFIX}{custom.strip()}"
                               if target == "custom" else target)
        try:
            job = imports.import_job_create(principal=self.principal, file_id=file_id,
                                            mapping=mapping, request=request)
        except APIError as error:
            if not file_id or (error.details or {}).get("issues", [{}])[0].get(
                    "field") == "file_id":
                raise
            preview = imports.import_preview(organization=self.principal.organization,
                                             file_id=file_id)
            issues = (error.details or {}).get("issues") or []
            errors = [f"{i['field']}: {i['message']}" for i in issues] or [error.message]
            return render(request, "dashboard/contacts/import_mapping.html",
                          _mapping_context(preview, errors=errors, chosen=mapping),
                          status=error.status)
        return redirect(f"/dashboard/contacts/imports/{job.pk}")


class ImportJobView(DashboardView):
    required_scopes = {"GET": READ}

    def get(self, request: HttpRequest, job_id: str) -> HttpResponse:
        job = ImportJob.objects.filter(pk=job_id).first()
        if job is None:
            raise APIError("NOT_FOUND", "No import with this id.")
        context = {"job": job, "section": "import",
                   "percent": int(100 * job.rows_done / job.rows_total) if job.rows_total else 0}
        if request.htmx:
            return render(request, "dashboard/contacts/_import_progress.html", context)
        return render(request, "dashboard/contacts/import_job.html", context)


# --- Export -----------------------------------------------------------------------------


class ExportView(DashboardView):
    """GET: the export form and recent exports. POST: queue a background export."""

    required_scopes = {"GET": READ, "POST": READ}

    def get(self, request: HttpRequest) -> HttpResponse:
        allowed = can_export(self.principal)
        return render(request, "dashboard/contacts/export.html", {
            "can_export": allowed, "section": "export",
            "lists": ContactList.objects.order_by("name")[:200] if allowed else [],
            "jobs": ExportJob.objects.order_by("-id")[:10] if allowed else [],
            "q": request.GET.get("q", "")})

    def post(self, request: HttpRequest) -> HttpResponse:
        require_export_role(self.principal)
        data = validated(BulkExportSerializer, {
            key: value for key, value in (("q", request.POST.get("q")),
                                          ("list_id", request.POST.get("list_id")),
                                          ("format", request.POST.get("format") or "csv"),
                                          ("filename", request.POST.get("filename")))
            if value})
        fmt = data.pop("format", "csv") or "csv"
        filename = exports.clean_filename(data.pop("filename", ""), fmt)
        filters = {k: v for k, v in data.items() if v not in (None, "")}
        job = exports.export_job_create(
            organization=self.principal.organization, principal=self.principal,
            filters=filters, fmt=fmt, filename=filename, request=request)
        return redirect(f"/dashboard/contacts/exports/{job.pk}")

    def handle_error(self, request: HttpRequest, error: APIError) -> HttpResponse:
        if error.code == "INSUFFICIENT_PERMISSIONS":  # a refusal is a 403, not a flash
            return error_response(request, error)
        return super().handle_error(request, error)


def _export_job(principal: Principal, job_id: str) -> ExportJob:
    require_export_role(principal)
    job = ExportJob.objects.filter(pk=job_id).select_related("file").first()
    if job is None:
        raise APIError("NOT_FOUND", "No export with this id.")
    return job


class ExportJobView(DashboardView):
    required_scopes = {"GET": READ}

    def get(self, request: HttpRequest, job_id: str) -> HttpResponse:
        job = _export_job(self.principal, job_id)
        progress = ExportJobSerializer(job).get_progress(job)
        context = {"job": job, "section": "export",
                   "finished": job.status in (ExportStatus.SUCCEEDED, ExportStatus.FAILED),
                   "percent": int(100 * progress) if progress is not None else None}
        if request.htmx:
            return render(request, "dashboard/contacts/_export_progress.html", context)
        return render(request, "dashboard/contacts/export_job.html", context)


class ExportDownloadView(DashboardView):
    """The finished export's file, same-origin (the API hands a signed URL instead)."""

    required_scopes = {"GET": READ}

    def get(self, request: HttpRequest, job_id: str) -> HttpResponse:
        job = _export_job(self.principal, job_id)
        if job.status != ExportStatus.SUCCEEDED or job.file is None:
            raise APIError("NOT_FOUND", "This export has no file (yet).")
        response = FileResponse(default_storage.open(job.file.storage_name, "rb"),
                                as_attachment=True, filename=job.file.filename,
                                content_type=job.file.content_type)
        response["Cache-Control"] = "no-store"
        return response
