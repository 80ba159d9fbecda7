"""Broadcasts (campaigns, `cmp_`) and their recipient snapshots (issue 7).

A `Broadcast` sends one message (a template with per-recipient variables, or a body) to
every contact of a list or a saved segment. Its id is the `campaign_id` every message it
sends carries (`Message.campaign_id`), which template analytics groups by and the
segments `from-clicks` cohorts read from the click records.

    scheduled --(send_at)--> running --> completed
    queued ------------------^   \\--> canceled (POST .../cancel) | failed (nothing can be sent)

When it starts, the audience is copied into `BroadcastRecipient` rows in one
`INSERT ... SELECT` (a snapshot: contacts added to the list later are not sent to). The
runner tasks then claim pending recipients (`FOR UPDATE SKIP LOCKED`), create each one's
`Message` in the same transaction that marks the recipient, and let the message pipeline
send it. A recipient's `message_id` and the unique `(campaign_id, contact_id)` constraint
on `Message` make a second message for the same recipient impossible, whatever crashes.

Counters are denormalized on the broadcast and moved with `F()` in the transactions that
change the recipients (the runner's batch, the message status transitions, the first
click of a recipient), so they are exact at every commit:

- `total_recipients`: the snapshot's size;
- `queued`: recipients whose message was created (handed to the message pipeline);
- `sent`: of those, messages the provider accepted (`sent`, or `delivered` directly);
- `delivered`; `failed` (`failed`, `undelivered`, `expired`);
- `skipped_opted_out`: recipients who opted out (STOP) of the sender or service;
- `skipped_invalid`: recipients the send refused (an invalid address, a template variable
  with no value for this contact...), with the code on the recipient row;
- `canceled`: recipients never processed because the broadcast was canceled or failed;
- `clicked`: recipients who followed at least one tracked link of their message.
"""

from __future__ import annotations

from django.db import models
from django.utils import timezone

from platform_core.ids import PublicIdField
from platform_core.tenancy.models import TenantModel


class BroadcastStatus(models.TextChoices):
    SCHEDULED = "scheduled"
    QUEUED = "queued"
    RUNNING = "running"
    COMPLETED = "completed"
    CANCELED = "canceled"
    FAILED = "failed"


ACTIVE_STATUSES = frozenset({BroadcastStatus.SCHEDULED, BroadcastStatus.QUEUED,
                             BroadcastStatus.RUNNING})


class RecipientStatus(models.TextChoices):
    PENDING = "pending"
    QUEUED = "queued"
    SENT = "sent"
    DELIVERED = "delivered"
    FAILED = "failed"
    SKIPPED_OPTED_OUT = "skipped_opted_out"
    SKIPPED_INVALID = "skipped_invalid"
    CANCELED = "canceled"


COUNTER_FIELDS = ("total_recipients", "queued", "sent", "delivered", "failed",
                  "skipped_opted_out", "skipped_invalid", "canceled", "clicked")


class Broadcast(TenantModel):
    id = PublicIdField(prefix="cmp")
    name = models.CharField(max_length=200)
    status = models.CharField(max_length=16, choices=BroadcastStatus.choices,
                              default=BroadcastStatus.QUEUED)
    channel = models.CharField(max_length=16)
    # The content: a template (variables may name contact fields) or a body.
    template_name = models.CharField(max_length=255, null=True, blank=True)
    language = models.CharField(max_length=35, null=True, blank=True)
    variables = models.JSONField(default=dict, blank=True)
    body = models.TextField(blank=True, default="")
    subject = models.CharField(max_length=998, blank=True, default="")
    media_urls = models.JSONField(default=list, blank=True)
    # The audience: exactly one of a contact list and a saved segment.
    list_id = models.CharField(max_length=40, null=True, blank=True)
    segment_id = models.CharField(max_length=40, null=True, blank=True)
    # The sender: a messaging service's pool, an explicit address, or the default.
    messaging_service = models.ForeignKey("messaging.MessagingService", null=True, blank=True,
                                          on_delete=models.SET_NULL, related_name="broadcasts")
    from_address = models.CharField(max_length=320, blank=True, default="")
    # None: the messaging service's `shorten_links` decides.
    shorten_links = models.BooleanField(null=True, blank=True)
    # Messages per second per sender address (None: MESSAGING_SENDER_RATE_PER_SECOND).
    rate_per_second = models.FloatField(null=True, blank=True)
    send_at = models.DateTimeField(null=True, blank=True)

    total_recipients = models.PositiveIntegerField(default=0)
    queued = models.PositiveIntegerField(default=0)
    sent = models.PositiveIntegerField(default=0)
    delivered = models.PositiveIntegerField(default=0)
    failed = models.PositiveIntegerField(default=0)
    skipped_opted_out = models.PositiveIntegerField(default=0)
    skipped_invalid = models.PositiveIntegerField(default=0)
    canceled = models.PositiveIntegerField(default=0)
    clicked = models.PositiveIntegerField(default=0)

    error_code = models.CharField(max_length=64, null=True, blank=True)
    error_message = models.CharField(max_length=1000, null=True, blank=True)
    created_by = models.CharField(max_length=64, blank=True, default="")
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(auto_now=True)
    started_at = models.DateTimeField(null=True, blank=True)
    completed_at = models.DateTimeField(null=True, blank=True)
    canceled_at = models.DateTimeField(null=True, blank=True)
    # Written by every runner batch: a running broadcast whose heartbeat is older than
    # BROADCAST_STALL_SECONDS lost its runner (a killed worker) and is resumed by the beat.
    heartbeat_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-id"]
        indexes = [
            models.Index(fields=["organization", "id"], name="messaging_cmp_org_id"),
            # The beat's scans: due scheduled broadcasts, stalled running ones.
            models.Index(fields=["send_at"], name="messaging_cmp_sched_due",
                         condition=models.Q(status="scheduled")),
            models.Index(fields=["heartbeat_at"], name="messaging_cmp_active",
                         condition=models.Q(status__in=["queued", "running"])),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.pk}, {self.status})"

    @property
    def from_(self) -> str:
        return self.from_address

    @property
    def pending(self) -> int:
        done = self.queued + self.skipped_opted_out + self.skipped_invalid + self.canceled
        return max(self.total_recipients - done, 0)


class BroadcastRecipient(TenantModel):
    """One contact of a broadcast's audience snapshot and what became of it."""

    broadcast = models.ForeignKey(Broadcast, on_delete=models.CASCADE,
                                  related_name="recipients")
    # Plain ids: the snapshot outlives a contact deleted after the send.
    contact_id = models.CharField(max_length=40)
    address = models.CharField(max_length=320)
    status = models.CharField(max_length=20, choices=RecipientStatus.choices,
                              default=RecipientStatus.PENDING)
    message_id = models.CharField(max_length=40, null=True, blank=True)
    error_code = models.CharField(max_length=64, null=True, blank=True)
    processed_at = models.DateTimeField(null=True, blank=True)
    clicked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["broadcast", "contact_id"],
                                    name="messaging_bcr_uniq_contact"),
            models.UniqueConstraint(fields=["message_id"], name="messaging_bcr_uniq_message",
                                    condition=models.Q(message_id__isnull=False)),
        ]
        indexes = [
            # The runners' claim: pending recipients of one broadcast in id order.
            models.Index(fields=["broadcast", "id"], name="messaging_bcr_pending",
                         condition=models.Q(status="pending")),
        ]

    def __str__(self) -> str:
        return f"{self.contact_id} of {self.broadcast_id} ({self.status})"
