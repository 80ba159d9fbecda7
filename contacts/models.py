"""Contacts, static contact lists, list memberships and background export jobs.

Document 2, 2.1 and 4.1. Other apps (segments, messaging) import `Contact`,
`ContactList` and `ListMembership` from here; the names are stable.
"""

from __future__ import annotations

from django.db import models
from django.utils import timezone

from platform_core.ids import PublicIdField
from platform_core.tenancy.models import TenantModel


class Contact(TenantModel):
    """A person the tenant can reach. `phone` is E.164, `email` lower-cased; both are
    unique per organization when set (empty strings are "not set")."""

    id = PublicIdField(prefix="cnt")
    first_name = models.CharField(max_length=255, blank=True, default="")
    last_name = models.CharField(max_length=255, blank=True, default="")
    phone = models.CharField(max_length=32, blank=True, default="")
    email = models.CharField(max_length=254, blank=True, default="")
    # Free-form key/value pairs; a GIN index (PostgreSQL) serves containment filters.
    custom_fields = models.JSONField(default=dict, blank=True)
    # A JSON array of strings; a GIN index (PostgreSQL) serves `tag:` filters.
    tags = models.JSONField(default=list, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["organization", "phone"],
                condition=~models.Q(phone=""),
                name="contacts_cnt_uniq_phone",
            ),
            models.UniqueConstraint(
                fields=["organization", "email"],
                condition=~models.Q(email=""),
                name="contacts_cnt_uniq_email",
            ),
        ]
        indexes = [
            models.Index(fields=["organization", "id"], name="contacts_cnt_org_id"),
            models.Index(fields=["organization", "created_at"], name="contacts_cnt_org_created"),
            models.Index(fields=["organization", "last_name", "first_name"],
                         name="contacts_cnt_org_name"),
        ]

    def __str__(self) -> str:
        return f"{self.full_name or self.email or self.phone or self.pk}"

    @property
    def full_name(self) -> str:
        return " ".join(p for p in (self.first_name, self.last_name) if p)


class ContactList(TenantModel):
    """A static list (Document 2, 2.1); `contact_count` is kept exact by the services."""

    id = PublicIdField(prefix="lst")
    name = models.CharField(max_length=255)
    description = models.CharField(max_length=1000, null=True, blank=True)
    contact_count = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-id"]
        indexes = [models.Index(fields=["organization", "id"], name="contacts_lst_org_id")]

    def __str__(self) -> str:
        return f"{self.name} ({self.pk})"


class ListMembership(TenantModel):
    """One contact on one list. Unique per (list, contact)."""

    contact = models.ForeignKey(Contact, on_delete=models.CASCADE, related_name="memberships")
    contact_list = models.ForeignKey(
        ContactList, on_delete=models.CASCADE, related_name="memberships"
    )
    added_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["contact_list", "contact"], name="contacts_lmb_uniq_list_contact"
            )
        ]
        indexes = [
            models.Index(fields=["organization", "contact"], name="contacts_lmb_org_contact"),
            models.Index(fields=["contact_list", "added_at"], name="contacts_lmb_list_added"),
        ]

    def __str__(self) -> str:
        return f"{self.contact_id} on {self.contact_list_id}"


class ExportStatus(models.TextChoices):
    QUEUED = "queued"
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"


class ExportFormat(models.TextChoices):
    CSV = "csv"
    XLSX = "xlsx"


class ExportJob(TenantModel):
    """A background contact export (`POST /contacts/bulk/export`)."""

    id = PublicIdField(prefix="exp")
    status = models.CharField(
        max_length=16, choices=ExportStatus.choices, default=ExportStatus.QUEUED
    )
    format = models.CharField(max_length=8, choices=ExportFormat.choices, default=ExportFormat.CSV)
    filename = models.CharField(max_length=255)
    filters = models.JSONField(default=dict, blank=True)
    rows_done = models.PositiveIntegerField(default=0)
    rows_total = models.PositiveIntegerField(null=True, blank=True)
    file = models.ForeignKey(
        "files.StoredFile", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    error = models.CharField(max_length=500, blank=True, default="")
    created_by = models.CharField(max_length=64, blank=True, default="")
    created_at = models.DateTimeField(default=timezone.now)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-id"]
        indexes = [models.Index(fields=["organization", "id"], name="contacts_exp_org_id")]

    def __str__(self) -> str:
        return f"export {self.pk} ({self.status})"


class ImportJob(TenantModel):
    """A background CSV import of contacts (the dashboard's Contacts screen).

    The uploaded file is a `StoredFile` (purpose `contact_import`); `mapping` says which
    CSV column fills which contact field. The job walks the rows in chunks and records its
    progress after each (`rows_done` of `rows_total`); `created_count` rows became
    contacts, `failed_count` were refused, the first `IMPORT_MAX_ERRORS` with their reason
    in `errors` ([{"row": line number, "code", "message"}]). Status values as ExportJob.
    """

    id = PublicIdField(prefix="imp")
    status = models.CharField(
        max_length=16, choices=ExportStatus.choices, default=ExportStatus.QUEUED
    )
    file = models.ForeignKey(
        "files.StoredFile", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    filename = models.CharField(max_length=255)
    mapping = models.JSONField(default=dict, blank=True)
    rows_total = models.PositiveIntegerField(default=0)
    rows_done = models.PositiveIntegerField(default=0)
    created_count = models.PositiveIntegerField(default=0)
    failed_count = models.PositiveIntegerField(default=0)
    errors = models.JSONField(default=list, blank=True)
    error = models.CharField(max_length=500, blank=True, default="")
    created_by = models.CharField(max_length=64, blank=True, default="")
    created_at = models.DateTimeField(default=timezone.now)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-id"]
        indexes = [models.Index(fields=["organization", "id"], name="contacts_imp_org_id")]

    def __str__(self) -> str:
        return f"import {self.pk} ({self.status})"

    @property
    def finished(self) -> bool:
        return self.status in (ExportStatus.SUCCEEDED, ExportStatus.FAILED)
