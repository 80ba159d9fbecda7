"""The event outbox, product events recorded by `POST /events/track`, and event sinks."""

from __future__ import annotations

from datetime import UTC
from typing import Any

from django.core.serializers.json import DjangoJSONEncoder
from django.db import models
from django.utils import timezone

from platform_core.crypto import EncryptedTextField
from platform_core.ids import PublicIdField
from platform_core.tenancy.models import TenantModel


def iso_z(moment) -> str:
    """ISO 8601 in UTC with milliseconds and a `Z`, as every envelope carries it."""
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace(
        "+00:00", "Z"
    )


class Event(TenantModel):
    """One platform event (Document 1, 2.3), written by `bus.emit` in the caller's
    transaction (the outbox) and fanned out after commit; `dispatched_at` marks the end
    of a complete fan-out."""

    id = PublicIdField(prefix="evt")
    type = models.CharField(max_length=100)
    data = models.JSONField(default=dict, encoder=DjangoJSONEncoder)
    created_at = models.DateTimeField(default=timezone.now)
    dispatched_at = models.DateTimeField(null=True, blank=True)
    dispatch_attempts = models.PositiveIntegerField(default=0)
    # After a failed attempt: not re-dispatched before this moment (exponential backoff).
    next_dispatch_at = models.DateTimeField(null=True, blank=True)
    # Handlers that failed on the last attempt: a re-dispatch runs only these.
    failed_handlers = models.JSONField(default=list, blank=True)

    class Meta:
        indexes = [
            models.Index(fields=["organization", "-created_at"], name="events_evt_org_created"),
            # The fan-out drain claims only the (few) rows not yet fanned out, oldest first.
            models.Index(
                fields=["created_at", "id"],
                name="events_evt_undispatched",
                condition=models.Q(dispatched_at__isnull=True),
            ),
        ]

    def __str__(self) -> str:
        return f"{self.type} {self.pk}"

    def envelope(self) -> dict[str, Any]:
        return {
            "id": self.pk,
            "type": self.type,
            "created_at": iso_z(self.created_at),
            "data": self.data,
        }


class TrackedEvent(TenantModel):
    """A product event recorded through `POST /api/v1/events/track` (Document 1, 4.6).

    Segments and loyalty count these per contact in a time window; `contact_id` is
    filled when the email or phone matches a contact.
    """

    id = PublicIdField(prefix="tev")
    name = models.CharField(max_length=200)
    properties = models.JSONField(default=dict, blank=True, encoder=DjangoJSONEncoder)
    contact_email = models.CharField(max_length=254, blank=True, default="")
    contact_phone = models.CharField(max_length=32, blank=True, default="")
    contact_id = models.CharField(max_length=40, null=True, blank=True)
    occurred_at = models.DateTimeField(default=timezone.now)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [
            models.Index(fields=["organization", "name", "occurred_at"],
                         name="events_tev_org_name_at"),
            models.Index(fields=["organization", "contact_id", "name", "occurred_at"],
                         name="events_tev_contact_name_at"),
            models.Index(fields=["organization", "contact_email"], name="events_tev_email"),
            models.Index(fields=["organization", "contact_phone"], name="events_tev_phone"),
        ]

    def __str__(self) -> str:
        return f"{self.name} {self.pk}"


class SinkKind(models.TextChoices):
    KAFKA = "kafka"
    HTTP_BATCH = "http_batch"


class EventSink(TenantModel):
    """Configuration of an event sink (Document 1, 2.6); one per organization and kind.

    The delivery worker is not active yet (4.7), so the run status is always empty.
    """

    id = PublicIdField(prefix="snk")
    kind = models.CharField(max_length=16, choices=SinkKind.choices)
    destination = models.JSONField(default=dict, blank=True)
    partition_key_path = models.CharField(max_length=500, blank=True, default="")
    headers = models.JSONField(default=dict, blank=True)
    max_batch_size = models.PositiveIntegerField(default=100)
    enabled = models.BooleanField(default=False)
    url = models.URLField(max_length=2000, blank=True, default="")
    credentials = EncryptedTextField(blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["organization", "kind"], name="events_sink_org_kind")
        ]

    def __str__(self) -> str:
        return f"{self.kind} sink of {self.organization_id}"

    @property
    def credentials_configured(self) -> bool:
        return bool(self.credentials)
