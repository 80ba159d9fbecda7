"""Celery tasks of the contacts family. Tasks take ids and call a service."""

from __future__ import annotations

from celery import shared_task

from platform_core.tenancy.context import tenant_context
from platform_core.tenancy.models import Organization


@shared_task(name="contacts.run_contact_export", ignore_result=True)
def run_contact_export(job_id: str, organization_id: str) -> str | None:
    """Run one background contact export; returns the job's final status."""
    from .exports import export_job_run

    organization = Organization.objects.filter(pk=organization_id).first()
    if organization is None:
        return None
    with tenant_context(organization):
        job = export_job_run(organization=organization, job_id=job_id)
    return job.status if job else None


@shared_task(name="contacts.run_contact_import", ignore_result=True)
def run_contact_import(job_id: str, organization_id: str) -> str | None:
    """Run one chunk of a contact import, then queue the next chunk until it is done (a
    long import never holds one worker, and its progress is committed chunk by chunk). A
    job another run holds answers None: that run queues what follows."""
    from . import imports

    organization = Organization.objects.filter(pk=organization_id).first()
    if organization is None:
        return None
    with tenant_context(organization):
        job = imports.import_job_run(organization=organization, job_id=job_id,
                                     max_rows=imports.CHUNK_ROWS)
        if job is not None and not job.finished:
            imports.enqueue(job)
    return job.status if job else None
