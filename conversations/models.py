"""Conversations: one thread per contact and channel (Document 2, 2.5; 0-conventions.md 7).

Minimal for now (issue 6): the thread that inbound messages create or continue, and that
`POST /api/v1/conversations` answers. At most one *open* thread exists per (organization,
contact, channel), enforced by a partial unique index, so concurrent inbound messages of
the same contact never fork the thread. A closed thread stays in history; the next inbound
message (or create call) of that pair opens a new one. Assignment, priority, tags, handoff
and the other lifecycle verbs arrive with the conversations issue.
"""

from __future__ import annotations

from django.db import models
from django.utils import timezone

from platform_core.ids import PublicIdField
from platform_core.tenancy.models import TenantModel

# The channels a thread can run on: the messaging channels (messaging.models.Channel).
CHANNELS = ("sms", "mms", "whatsapp", "rcs", "email", "voice")


class ConversationStatus(models.TextChoices):
    OPEN = "open"
    CLOSED = "closed"


class Conversation(TenantModel):
    id = PublicIdField(prefix="cnv")
    contact_id = models.CharField(max_length=40, help_text="The contact (`cnt_`) of the thread.")
    channel = models.CharField(max_length=16, choices=[(c, c) for c in CHANNELS])
    status = models.CharField(max_length=16, choices=ConversationStatus.choices,
                              default=ConversationStatus.OPEN)
    last_message_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["organization", "contact_id", "channel"],
                condition=models.Q(status="open"),
                name="conversations_one_open_thread",
            )
        ]
        indexes = [
            models.Index(fields=["organization", "id"], name="conversations_org_id"),
            models.Index(fields=["organization", "status", "id"],
                         name="conversations_org_status"),
            models.Index(fields=["organization", "channel", "id"],
                         name="conversations_org_channel"),
            models.Index(fields=["organization", "contact_id", "id"],
                         name="conversations_org_contact"),
        ]

    def __str__(self) -> str:
        return f"{self.pk} {self.channel} with {self.contact_id} ({self.status})"
