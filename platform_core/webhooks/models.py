"""Webhook endpoints, their deliveries and each delivery's attempts.

An endpoint (`whk_`) receives the events it subscribes to. Each (endpoint, event) pair is
one delivery (`dlv_`, unique, so the at-least-once fan-out never doubles it) holding the
event envelope, its status and the record of its last attempt (Document 1, 2.4); every
attempt is also kept as a `WebhookDeliveryAttempt` row.

A status callback (a message's `status_callback`, a messaging service's inbound webhook
URL) is a `CallbackDelivery` (`cbk_`): a signed POST of one event to a bare URL, kept
only while it is owed (deleted once it succeeds or its retries run out).

Delivery states: `pending` (waiting for its next attempt at `next_retry_at`, or claimed by
a worker under a lease while `claim_token` is set), `succeeded`, `failed` (the retry
schedule is exhausted or the receiver answered 410 Gone; the delivery is in the
dead-letter queue, `dead_lettered_at`).
"""

from __future__ import annotations

import json

from django.core.serializers.json import DjangoJSONEncoder
from django.db import models
from django.utils import timezone

from platform_core.crypto import EncryptedTextField
from platform_core.ids import PublicIdField
from platform_core.tenancy.models import TenantModel

from . import headers as header_rules


class DisabledReason(models.TextChoices):
    NONE = "", "Enabled"
    MANUAL = "manual", "Disabled by a user"
    FAILING = "failing", "Failing continuously"
    GONE = "gone", "Receiver answered 410 Gone"


class WebhookEndpoint(TenantModel):
    id = PublicIdField(prefix="whk")
    url = models.URLField(max_length=2048)
    description = models.CharField(max_length=500, blank=True, default="")
    # Event types, or ["*"] for every event.
    events = models.JSONField(default=list)
    enabled = models.BooleanField(default=True)
    disabled_reason = models.CharField(max_length=16, choices=DisabledReason.choices,
                                       blank=True, default="")
    disabled_at = models.DateTimeField(null=True, blank=True)
    secret = EncryptedTextField()
    # Custom headers sent on every delivery, JSON, encrypted (they carry receivers' secrets).
    headers_encrypted = EncryptedTextField(blank=True, default="")
    # Circuit breaker: when the current run of failures began (None after a success).
    failing_since = models.DateTimeField(null=True, blank=True)
    last_success_at = models.DateTimeField(null=True, blank=True)
    last_failure_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        indexes = [models.Index(fields=["organization", "id"], name="webhooks_endpoint_org_id")]

    def __str__(self) -> str:
        return f"{self.pk} -> {self.url}"

    @property
    def headers(self) -> dict[str, str]:
        return json.loads(self.headers_encrypted) if self.headers_encrypted else {}

    @headers.setter
    def headers(self, value: dict[str, str]) -> None:
        self.headers_encrypted = json.dumps(value) if value else ""

    @property
    def redacted_headers(self) -> dict[str, str]:
        return header_rules.redact(self.headers)

    def subscribes_to(self, event_type: str) -> bool:
        return "*" in self.events or event_type in self.events


class DeliveryStatus(models.TextChoices):
    PENDING = "pending"
    SUCCEEDED = "succeeded"
    FAILED = "failed"


class WebhookDelivery(TenantModel):
    id = PublicIdField(prefix="dlv")
    endpoint = models.ForeignKey(WebhookEndpoint, on_delete=models.CASCADE,
                                 related_name="deliveries")
    event_id = models.CharField(max_length=40)
    event_type = models.CharField(max_length=100)
    # The event envelope {id, type, created_at, data}: the body of every attempt.
    payload = models.JSONField(encoder=DjangoJSONEncoder)
    status = models.CharField(max_length=16, choices=DeliveryStatus.choices,
                              default=DeliveryStatus.PENDING)
    attempts = models.PositiveIntegerField(default=0)
    next_retry_at = models.DateTimeField(null=True, blank=True)
    # Set while a worker holds the delivery; the lease ends at next_retry_at.
    claim_token = models.CharField(max_length=32, blank=True, default="")
    # The last attempt (Document 1, 2.4).
    last_attempt_at = models.DateTimeField(null=True, blank=True)
    request_headers = models.JSONField(default=dict, blank=True)
    response_status = models.PositiveIntegerField(null=True, blank=True)
    response_headers = models.JSONField(null=True, blank=True)
    last_response_body = models.TextField(blank=True, default="")
    last_error = models.CharField(max_length=500, blank=True, default="")
    duration_ms = models.PositiveIntegerField(null=True, blank=True)
    succeeded_at = models.DateTimeField(null=True, blank=True)
    failed_at = models.DateTimeField(null=True, blank=True)
    dead_lettered_at = models.DateTimeField(null=True, blank=True)
    replay_of = models.ForeignKey("self", null=True, blank=True, on_delete=models.SET_NULL,
                                  related_name="replays")
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["endpoint", "event_id"],
                                    name="webhooks_delivery_endpoint_event"),
        ]
        indexes = [
            models.Index(fields=["endpoint", "id"], name="webhooks_dlv_endpoint_id"),
            models.Index(fields=["organization", "event_id"], name="webhooks_dlv_org_event"),
            # The drain's claim (engine.py): endpoints with pending rows (a skip scan), then
            # each one's due rows by due time; and each endpoint's rows claimed right now.
            models.Index(fields=["endpoint", "next_retry_at"], name="webhooks_dlv_due",
                         condition=models.Q(status="pending")),
            models.Index(fields=["endpoint"], name="webhooks_dlv_claimed",
                         condition=models.Q(status="pending") & ~models.Q(claim_token="")),
            models.Index(fields=["organization", "id"], name="webhooks_dlv_dead",
                         condition=models.Q(dead_lettered_at__isnull=False, status="failed")),
        ]

    def __str__(self) -> str:
        return f"{self.pk} {self.event_type} -> {self.endpoint_id} ({self.status})"


class WebhookDeliveryAttempt(TenantModel):
    """One HTTP attempt of a delivery, as sent and as answered."""

    delivery = models.ForeignKey(WebhookDelivery, on_delete=models.CASCADE,
                                 related_name="attempt_log")
    number = models.PositiveIntegerField()
    attempted_at = models.DateTimeField()
    request_headers = models.JSONField(default=dict)
    response_status = models.PositiveIntegerField(null=True, blank=True)
    response_headers = models.JSONField(null=True, blank=True)
    response_body = models.TextField(blank=True, default="")
    error = models.CharField(max_length=500, blank=True, default="")
    duration_ms = models.PositiveIntegerField(null=True, blank=True)
    outcome = models.CharField(max_length=16)  # succeeded, retrying, failed

    class Meta:
        indexes = [models.Index(fields=["delivery", "number"], name="webhooks_attempt_dlv")]

    def __str__(self) -> str:
        return f"{self.delivery_id} #{self.number} {self.outcome}"


class CallbackDelivery(TenantModel):
    """A status callback owed: one event to POST to a URL that is not a webhook endpoint.

    Sent by the outbound engine like a webhook delivery (engine.py; messaging/callbacks.py
    signs it), capped per `origin` (scheme://host:port) instead of per endpoint, retried
    on `CALLBACK_RETRY_SCHEDULE`. The row exists only while the callback is owed.
    """

    id = PublicIdField(prefix="cbk")
    event_id = models.CharField(max_length=40)
    url = models.URLField(max_length=2048)
    origin = models.CharField(max_length=300)
    status = models.CharField(max_length=16, default=DeliveryStatus.PENDING)
    attempts = models.PositiveIntegerField(default=0)
    next_retry_at = models.DateTimeField(default=timezone.now)
    claim_token = models.CharField(max_length=32, blank=True, default="")
    last_error = models.CharField(max_length=500, blank=True, default="")
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        indexes = [
            models.Index(fields=["origin", "next_retry_at"], name="webhooks_cbk_due",
                         condition=models.Q(status="pending")),
            models.Index(fields=["origin"], name="webhooks_cbk_claimed",
                         condition=models.Q(status="pending") & ~models.Q(claim_token="")),
        ]

    def __str__(self) -> str:
        return f"{self.pk} {self.event_id} -> {self.url}"
