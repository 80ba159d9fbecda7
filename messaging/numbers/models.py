"""Port-in requests (Document 2, 4.4): numbers moving to the platform from another carrier.

A request is stored with status `submitted` and the window porting takes (7 to 14 business
days). The account PIN the losing carrier asks for is a secret: encrypted at rest and never
returned by the API. The letter of authorization is a file the organization uploaded
(`loa_file_id`), named by the signed URL the file endpoints issued.
"""

from __future__ import annotations

from django.db import models
from django.utils import timezone

from platform_core.crypto import EncryptedTextField
from platform_core.ids import PublicIdField
from platform_core.tenancy.models import TenantModel


class PortingStatus(models.TextChoices):
    SUBMITTED = "submitted"
    IN_PROGRESS = "in_progress"
    COMPLETED = "completed"
    REJECTED = "rejected"
    CANCELED = "canceled"


# Requests whose numbers may not be named by another request.
ACTIVE_PORTING_STATUSES = (PortingStatus.SUBMITTED, PortingStatus.IN_PROGRESS)


class PortingRequest(TenantModel):
    id = PublicIdField(prefix="prt")
    numbers = models.JSONField(default=list, help_text="E.164 numbers to port in.")
    current_carrier = models.CharField(max_length=200)
    country = models.CharField(max_length=2, help_text="ISO 3166-1 alpha-2.")
    authorized_signer = models.CharField(max_length=200)
    account_number = models.CharField(max_length=100)
    account_pin = EncryptedTextField(blank=True, default="")
    loa_file_id = models.CharField(max_length=40)
    loa_file_url = models.URLField(max_length=2048)
    status = models.CharField(max_length=16, choices=PortingStatus.choices,
                              default=PortingStatus.SUBMITTED)
    estimated_completion_earliest = models.DateField()
    estimated_completion_latest = models.DateField()
    submitted_by = models.CharField(max_length=64, blank=True, default="")
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-id"]
        indexes = [
            models.Index(fields=["organization", "id"], name="numbers_prt_org_id"),
            models.Index(fields=["organization", "status", "id"], name="numbers_prt_org_status"),
        ]

    def __str__(self) -> str:
        return f"{self.pk} ({self.status}): {', '.join(self.numbers)}"
