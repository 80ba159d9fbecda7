"""Conversations: the inbox (Document 2, 2.5 and 4.8; 0-conventions.md 7; Document 3, 2.5).

One thread per contact and channel. At most one *live* thread (open or snoozed) exists per
(organization, contact, channel), enforced by a partial unique index, so concurrent inbound
messages of the same contact never fork the thread; an inbound message wakes a snoozed one.
A closed or archived thread stays in history; the next inbound message (or create call)
of that pair opens a new one.

The inbox state the list filters on (`sentiment`, `unread_count`, `assignee_id`, last
message preview) is kept on the row, written where it changes (inbound message, reply,
verb), so the list is one indexed query. Routing state lives on the row too
(`waiting_since`, `queue`, the offer); agents' load is a maintained counter on
`RoutingAgent` (routing_models.py).
"""

from __future__ import annotations

from django.db import models
from django.utils import timezone

from platform_core.ids import PublicIdField
from platform_core.tenancy.models import TenantModel

from .routing_models import RoutingAgent  # noqa: F401 - a model of this app
from .side_models import (  # noqa: F401 - models of this app
    CobrowseSession,
    SideConversation,
    SideMessage,
)

# The channels a thread can run on: the messaging channels (messaging.models.Channel).
CHANNELS = ("sms", "mms", "whatsapp", "rcs", "email", "voice")
# Chat apps with a 24-hour customer-service window (free-form replies only inside it).
WINDOWED_CHANNELS = ("whatsapp",)
LIVE_STATUSES = ("open", "snoozed")


class ConversationStatus(models.TextChoices):
    OPEN = "open"
    CLOSED = "closed"
    SNOOZED = "snoozed"
    ARCHIVED = "archived"


class Priority(models.TextChoices):
    NONE = "none"
    LOW = "low"
    MEDIUM = "medium"
    HIGH = "high"
    URGENT = "urgent"


PRIORITY_RANK = {p: i for i, p in enumerate(Priority.values)}


class Sentiment(models.TextChoices):
    POSITIVE = "positive"
    NEUTRAL = "neutral"
    NEGATIVE = "negative"


class AssignmentStatus(models.TextChoices):
    NONE = "none"
    OFFERED = "offered"    # the router offered it; the assignee must accept
    ACCEPTED = "accepted"  # the offered agent accepted
    ASSIGNED = "assigned"  # assigned directly (`assign`)


class HandoffStatus(models.TextChoices):
    NONE = "none"
    PENDING = "pending"
    RESOLVED = "resolved"


class HandoffReason(models.TextChoices):
    CANT_UNDERSTAND = "cant_understand"
    POLICY_BLOCK = "policy_block"
    CUSTOMER_REQUEST = "customer_request"
    TOOL_FAILED = "tool_failed"
    ESCALATION_THRESHOLD = "escalation_threshold"
    MANUAL = "manual"


class Conversation(TenantModel):
    id = PublicIdField(prefix="cnv")
    contact_id = models.CharField(max_length=40, help_text="The contact (`cnt_`) of the thread.")
    channel = models.CharField(max_length=16, choices=[(c, c) for c in CHANNELS])
    status = models.CharField(max_length=16, choices=ConversationStatus.choices,
                              default=ConversationStatus.OPEN)
    priority = models.CharField(max_length=8, choices=Priority.choices, default=Priority.NONE)
    tags = models.JSONField(default=list, blank=True)
    unread_count = models.PositiveIntegerField(default=0)
    sentiment = models.CharField(max_length=8, choices=Sentiment.choices, null=True,
                                 blank=True)
    last_message_at = models.DateTimeField(null=True, blank=True)
    last_message_preview = models.CharField(max_length=140, blank=True, default="")
    last_message_direction = models.CharField(max_length=8, blank=True, default="")
    # Replies go out on `reply_channel` when set (resume-channel), else on `channel`.
    reply_channel = models.CharField(max_length=16, null=True, blank=True)
    ai_led = models.BooleanField(default=False)
    # The AI agent (agents.Agent id) leading or last leading the thread; kept after the
    # agent is deleted so history and insights still name it.
    ai_agent_id = models.CharField(max_length=40, blank=True, default="")
    # Assignment and routing.
    assignee_id = models.CharField(max_length=40, null=True, blank=True)
    assignment_status = models.CharField(max_length=8, choices=AssignmentStatus.choices,
                                         default=AssignmentStatus.NONE)
    offered_at = models.DateTimeField(null=True, blank=True)
    offer_expires_at = models.DateTimeField(null=True, blank=True)
    accepted_at = models.DateTimeField(null=True, blank=True)
    declined_by = models.JSONField(default=list, blank=True)
    queue = models.CharField(max_length=64, blank=True, default="")
    waiting_since = models.DateTimeField(null=True, blank=True,
                                         help_text="Set while waiting for a human agent.")
    # Handoff from an AI-led thread.
    handoff_status = models.CharField(max_length=8, choices=HandoffStatus.choices,
                                      default=HandoffStatus.NONE)
    handoff_reason = models.CharField(max_length=24, blank=True, default="")
    handoff_requested_at = models.DateTimeField(null=True, blank=True)
    handoff_brief = models.TextField(blank=True, default="")
    # Lifecycle.
    escalated_at = models.DateTimeField(null=True, blank=True)
    snoozed_until = models.DateTimeField(null=True, blank=True)
    closed_at = models.DateTimeField(null=True, blank=True)
    merged_into_id = models.CharField(max_length=40, null=True, blank=True)
    prediction = models.JSONField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["organization", "contact_id", "channel"],
                condition=models.Q(status__in=LIVE_STATUSES),
                name="conversations_one_live_thread",
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
            # The inbox's usual triple (status, channel, priority): the page and its capped
            # total read from the index alone.
            models.Index(fields=["organization", "status", "channel", "priority", "id"],
                         name="conversations_org_inbox"),
            models.Index(fields=["organization", "sentiment", "id"],
                         name="conversations_org_sentiment",
                         condition=models.Q(sentiment__isnull=False)),
            models.Index(fields=["organization", "priority", "id"],
                         name="conversations_org_priority"),
            models.Index(fields=["organization", "ai_agent_id", "created_at"],
                         name="conversations_org_agent",
                         condition=~models.Q(ai_agent_id="")),
            models.Index(fields=["organization", "assignee_id", "id"],
                         name="conversations_org_assignee",
                         condition=models.Q(assignee_id__isnull=False)),
            models.Index(fields=["organization", "id"], name="conversations_org_unread",
                         condition=models.Q(unread_count__gt=0)),
            # The router's FIFO and queue positions: unassigned waiting threads by time.
            models.Index(fields=["organization", "waiting_since"],
                         name="conversations_waiting",
                         condition=models.Q(waiting_since__isnull=False,
                                            assignee_id__isnull=True)),
            models.Index(fields=["offer_expires_at"], name="conversations_offer_expiry",
                         condition=models.Q(assignment_status="offered")),
            models.Index(fields=["snoozed_until"], name="conversations_snoozed",
                         condition=models.Q(status="snoozed")),
        ]

    def __str__(self) -> str:
        return f"{self.pk} {self.channel} with {self.contact_id} ({self.status})"


class ConversationActivity(TenantModel):
    """One row of a conversation's activity feed: who did what, when."""

    id = PublicIdField(prefix="cact")
    conversation = models.ForeignKey(Conversation, on_delete=models.CASCADE,
                                     related_name="activity")
    kind = models.CharField(max_length=40)
    actor_type = models.CharField(max_length=16, default="system")
    actor_id = models.CharField(max_length=64, blank=True, default="")
    data = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-id"]
        indexes = [models.Index(fields=["conversation", "id"], name="conv_activity_conv_id")]
