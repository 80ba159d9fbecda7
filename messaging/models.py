"""Messages, messaging services, sticky senders and opt-outs (issue 6, messaging contract).

A `Message` (`msg_`) is one message on one channel, outbound (sent through a provider) or
inbound (received from one). Its status walks the lifecycle of 0-conventions.md section 6:

    scheduled -> queued -> sent -> delivered
                             \\-> undelivered | failed | expired
    scheduled -> canceled                  inbound: received

`STATUS_RANK` orders the statuses so that the status moves (status.py) never move a
message backwards: a late "sent" receipt after "delivered" is ignored, and the terminal
failures (`failed`, `undelivered`, `expired`, `canceled`) are final.

A fallback chain (`fallback`, `fallback_after_seconds`) makes child messages on the next
channel; a child points at the message it falls back from through `parent`.

A broadcast's messages carry its id (`cmp_`) in `campaign_id`, one message per contact
(`messaging_msg_uniq_campaign_contact`); see `broadcasts/models.py`.

A `MessagingService` (`mgs_`) bundles a pool of senders (sticky per recipient through
`StickySender`), opt-out handling (`OptOut`, written by the STOP keywords) and an inbound
webhook.
"""

from __future__ import annotations

import copy

from django.db import models
from django.utils import timezone

from platform_core.crypto import EncryptedTextField
from platform_core.ids import PublicIdField
from platform_core.tenancy.models import TenantModel, organization_key


class Channel(models.TextChoices):
    SMS = "sms"
    MMS = "mms"
    WHATSAPP = "whatsapp"
    RCS = "rcs"
    EMAIL = "email"
    VOICE = "voice"
    # Chat apps reached by phone number: Viber (Viber Business Messages) and Telegram
    # (Telegram Gateway, which delivers verification codes only: the body is the code).
    VIBER = "viber"
    TELEGRAM = "telegram"
    # A missed call whose caller id ends with the body's digits (a verification code).
    FLASHCALL = "flashcall"


PHONE_CHANNELS = frozenset({Channel.SMS, Channel.MMS, Channel.WHATSAPP, Channel.RCS,
                            Channel.VOICE, Channel.VIBER, Channel.TELEGRAM, Channel.FLASHCALL})
# Channels whose body is a 4-8 digit code, not a text (see validation.check_code_body).
CODE_CHANNELS = frozenset({Channel.TELEGRAM, Channel.FLASHCALL})


class Direction(models.TextChoices):
    OUTBOUND = "outbound"
    INBOUND = "inbound"


class MessageStatus(models.TextChoices):
    SCHEDULED = "scheduled"
    QUEUED = "queued"
    SENT = "sent"
    DELIVERED = "delivered"
    UNDELIVERED = "undelivered"
    FAILED = "failed"
    EXPIRED = "expired"
    CANCELED = "canceled"
    RECEIVED = "received"


# Monotonic order of the lifecycle. Terminal statuses share the top rank: once one is
# reached, nothing moves the message again (a late delivery receipt after `failed` is
# recorded by the caller's log only).
STATUS_RANK: dict[str, int] = {
    MessageStatus.SCHEDULED: 0,
    MessageStatus.QUEUED: 1,
    MessageStatus.SENT: 2,
    MessageStatus.DELIVERED: 3,
    MessageStatus.UNDELIVERED: 3,
    MessageStatus.FAILED: 3,
    MessageStatus.EXPIRED: 3,
    MessageStatus.CANCELED: 3,
    MessageStatus.RECEIVED: 3,
}
TERMINAL_STATUSES = frozenset(
    {
        MessageStatus.DELIVERED,
        MessageStatus.UNDELIVERED,
        MessageStatus.FAILED,
        MessageStatus.EXPIRED,
        MessageStatus.CANCELED,
        MessageStatus.RECEIVED,
    }
)
FAILURE_STATUSES = frozenset(
    {MessageStatus.UNDELIVERED, MessageStatus.FAILED, MessageStatus.EXPIRED}
)


class MessagingService(TenantModel):
    """A sender pool with sticky sender per recipient, opt-out handling and an inbound webhook."""

    id = PublicIdField(prefix="mgs")
    name = models.CharField(max_length=200)
    # [{"channel": "sms", "from": "+15550001111"}, ...]
    senders = models.JSONField(default=list, blank=True)
    sticky_sender = models.BooleanField(default=True)
    inbound_webhook_url = models.URLField(max_length=2048, null=True, blank=True)
    # Default status callback of the messages sent through this service.
    status_callback = models.URLField(max_length=2048, null=True, blank=True)
    opt_out_handling = models.BooleanField(default=True)
    shorten_links = models.BooleanField(default=False)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        indexes = [models.Index(fields=["organization", "id"], name="messaging_mgs_org_id")]

    def __str__(self) -> str:
        return f"{self.name} ({self.pk})"

    def holds_sender(self, address: str) -> bool:
        """Whether `address` is one of the pool's from-addresses (any channel)."""
        return any(isinstance(s, dict) and s.get("from") == address for s in self.senders)

    def senders_for(self, channel: str) -> list[str]:
        """The pool's from-addresses for `channel` (mms shares the sms senders)."""
        wanted = {channel, "sms"} if channel == Channel.MMS else {channel}
        return [
            s["from"]
            for s in self.senders
            if isinstance(s, dict) and s.get("channel") in wanted and s.get("from")
        ]


class Message(TenantModel):
    # The message table takes every accepted send: each index costs each INSERT. Columns
    # are indexed through Meta.indexes only (no `db_index`: on PostgreSQL that adds a
    # `varchar_pattern_ops` twin nothing here uses), optional ones partially (NULLs skipped).
    id = PublicIdField(prefix="msg")
    # Served by `messaging_msg_org_id` (organization, id).
    organization = organization_key(db_index=False)
    channel = models.CharField(max_length=16, choices=Channel.choices)
    direction = models.CharField(max_length=16, choices=Direction.choices,
                                 default=Direction.OUTBOUND)
    to = models.CharField(max_length=320)
    # The sender. Django forbids a field named `from_` (trailing underscore breaks lookups),
    # so the column is the field `from_address` and `from_` is a property over it: it reads,
    # assigns and is accepted by the constructor (`Message(from_=...)`, `create(from_=...)`);
    # filter with `from_address`.
    from_address = models.CharField(max_length=320, blank=True, default="")
    body = models.TextField(blank=True, default="")
    # The real text of a message whose `body` is redacted (a verification code: Verify
    # stores the text with the code masked in `body`, read by every API, event and export).
    # Encrypted at rest, handed to the provider only (`for_provider`), and cleared by the
    # status batch once no send or fallback can need it (status.release_secret).
    secret_body = EncryptedTextField(null=True, blank=True, editable=False)
    media_urls = models.JSONField(default=list, blank=True)
    subject = models.CharField(max_length=998, blank=True, default="")
    template_name = models.CharField(max_length=255, null=True, blank=True)
    language = models.CharField(max_length=35, null=True, blank=True)
    variables = models.JSONField(default=dict, blank=True)
    status = models.CharField(max_length=16, choices=MessageStatus.choices,
                              default=MessageStatus.QUEUED)
    error_code = models.CharField(max_length=64, null=True, blank=True)
    error_message = models.CharField(max_length=1000, null=True, blank=True)
    provider = models.CharField(max_length=64, blank=True, default="")
    provider_message_id = models.CharField(max_length=255, null=True, blank=True)
    messaging_service = models.ForeignKey(MessagingService, null=True, blank=True,
                                          on_delete=models.SET_NULL, related_name="messages",
                                          db_index=False)
    contact_id = models.CharField(max_length=40, null=True, blank=True)
    conversation_id = models.CharField(max_length=40, null=True, blank=True)
    # The broadcast (`cmp_`) that sent this message; template analytics groups by it.
    campaign_id = models.CharField(max_length=40, null=True, blank=True)
    status_callback = models.URLField(max_length=2048, null=True, blank=True)
    shorten_links = models.BooleanField(default=False)
    send_at = models.DateTimeField(null=True, blank=True)
    fallback = models.JSONField(default=list, blank=True)
    fallback_after_seconds = models.PositiveIntegerField(default=60)
    # When the no-receipt fallback timer of this message fires (None: no fallback pending).
    fallback_due_at = models.DateTimeField(null=True, blank=True)
    # Set once the fallback child was sent (under the row lock): never send twice.
    fallback_triggered_at = models.DateTimeField(null=True, blank=True)
    parent = models.ForeignKey("self", null=True, blank=True, on_delete=models.SET_NULL,
                               related_name="fallbacks", db_index=False)
    # Free-form details: provider raw payload of inbound messages, keyword handling.
    metadata = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(auto_now=True)
    # Claimed by a send batch (under the row lock) before the provider is called: another
    # batch never claims it again (at most once to the provider; messaging/sending/drain.py).
    dispatched_at = models.DateTimeField(null=True, blank=True)
    # Provider calls that ended in a transient error; the next one is due at `retry_at`
    # (timed work swept by messaging/timed.py, no per-message countdown task).
    send_attempts = models.PositiveSmallIntegerField(default=0)
    retry_at = models.DateTimeField(null=True, blank=True)
    # When its acceptance event (`message.queued` / `message.scheduled`) was emitted. A send
    # through the API leaves it unset for the batch dispatcher (messaging/dispatcher.py);
    # every other way of creating a message announces it at once.
    announced_at = models.DateTimeField(null=True, blank=True, default=timezone.now)
    sent_at = models.DateTimeField(null=True, blank=True)
    delivered_at = models.DateTimeField(null=True, blank=True)
    failed_at = models.DateTimeField(null=True, blank=True)
    canceled_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [
            models.Index(fields=["organization", "id"], name="messaging_msg_org_id"),
            models.Index(fields=["organization", "status", "id"], name="messaging_msg_org_status"),
            models.Index(fields=["organization", "channel", "id"],
                         name="messaging_msg_org_channel"),
            models.Index(fields=["organization", "direction", "id"],
                         name="messaging_msg_org_direction"),
            models.Index(fields=["organization", "to", "id"], name="messaging_msg_org_to"),
            models.Index(fields=["organization", "from_address", "id"],
                         name="messaging_msg_org_from"),
            models.Index(fields=["organization", "created_at"], name="messaging_msg_org_created"),
            # Filters, receipts (by provider id) and the SET NULL of deleted services/parents.
            *[models.Index(fields=[field], name=f"messaging_msg_{short}",
                           condition=models.Q(**{f"{field}__isnull": False}))
              for field, short in (("contact_id", "contact"),
                                   ("conversation_id", "conversation"),
                                   ("messaging_service", "service"),
                                   ("parent", "parent"),
                                   ("provider_message_id", "provider_id"))],
            # The timed drain (messaging/timed.py): due scheduled sends, due no-receipt
            # fallbacks.
            models.Index(fields=["send_at"], name="messaging_msg_sched_due",
                         condition=models.Q(status="scheduled")),
            # Announced, queued and not claimed: what the send drain claims after the fresh
            # (unannounced) sends: due retries, due scheduled sends, a lost drain signal.
            models.Index(fields=["created_at"], name="messaging_msg_sendable",
                         condition=models.Q(status="queued", dispatched_at__isnull=True,
                                            announced_at__isnull=False)),
            models.Index(fields=["fallback_due_at"], name="messaging_msg_fallback_due",
                         condition=models.Q(fallback_due_at__isnull=False,
                                            fallback_triggered_at__isnull=True)),
            # Claimed by a send task that never recorded the provider's answer (the worker
            # died mid-batch): the timed drain settles them from the send journal.
            models.Index(fields=["dispatched_at"], name="messaging_msg_dispatch_open",
                         condition=models.Q(status="queued", dispatched_at__isnull=False)),
            # Sandbox sends awaiting the double's delivery receipt, due `sent_at` + the
            # receipt delay (timed work, messaging/timed.py).
            models.Index(fields=["sent_at"], name="messaging_msg_sandbox_sent",
                         condition=models.Q(status="sent", provider="sandbox")),
            # The dispatcher's outbox: accepted messages not announced yet.
            models.Index(fields=["id"], name="messaging_msg_unannounced",
                         condition=models.Q(announced_at__isnull=True)),
        ]
        constraints = [
            # One message per recipient of a broadcast, whatever a crashed worker retries.
            models.UniqueConstraint(fields=["campaign_id", "contact_id"],
                                    name="messaging_msg_uniq_campaign_contact",
                                    condition=models.Q(campaign_id__isnull=False)),
        ]

    def __str__(self) -> str:
        return f"{self.pk} {self.channel} {self.direction} to {self.to} ({self.status})"

    @property
    def from_(self) -> str:
        return self.from_address

    def for_provider(self) -> Message:
        """What a provider adapter is given: this message, or for one with a secret body a
        copy carrying the real text (the stored row and every other reader keep `body`)."""
        if self.secret_body is None:
            return self
        outbound = copy.copy(self)
        outbound.body = self.secret_body
        return outbound

    @from_.setter
    def from_(self, value: str) -> None:
        self.from_address = value or ""


class StickySender(TenantModel):
    """The sender a messaging service's pool gave a recipient, reused on every later send."""

    messaging_service = models.ForeignKey(MessagingService, on_delete=models.CASCADE,
                                          related_name="sticky_senders")
    channel = models.CharField(max_length=16, choices=Channel.choices)
    recipient = models.CharField(max_length=320)
    sender = models.CharField(max_length=320)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["organization", "messaging_service", "channel", "recipient"],
                name="messaging_sticky_unique",
            )
        ]

    def __str__(self) -> str:
        return f"{self.recipient} -> {self.sender} via {self.messaging_service_id}"


class OptOut(TenantModel):
    """A recipient who opted out (STOP) of a messaging service, a sender address or all.

    Scope: `messaging_service` when the keyword reached a service's number (then `sender`
    also records that number), else `sender` alone; `sender == "*"` (STOPALL) covers every
    sender of the organization. `recipient` is the end user's address (E.164 or email).
    """

    ALL_SENDERS = "*"

    messaging_service = models.ForeignKey(MessagingService, null=True, blank=True,
                                          on_delete=models.CASCADE, related_name="opt_outs")
    sender = models.CharField(max_length=320, blank=True, default="")
    recipient = models.CharField(max_length=320)
    channel = models.CharField(max_length=16, choices=Channel.choices)
    keyword = models.CharField(max_length=32, blank=True, default="")
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["organization", "messaging_service", "recipient"],
                condition=models.Q(messaging_service__isnull=False),
                name="messaging_optout_service_unique",
            ),
            models.UniqueConstraint(
                fields=["organization", "sender", "recipient"],
                condition=models.Q(messaging_service__isnull=True),
                name="messaging_optout_sender_unique",
            ),
        ]
        indexes = [
            models.Index(fields=["organization", "recipient"], name="messaging_optout_recipient"),
        ]

    def __str__(self) -> str:
        scope = self.messaging_service_id or self.sender
        return f"{self.recipient} opted out of {scope}"


class CallbackSecret(TenantModel):
    """The organization's signing secret of per-message status callbacks and of messaging
    services' inbound webhooks (one per organization, made on first use, rotatable)."""

    secret = EncryptedTextField()
    created_at = models.DateTimeField(default=timezone.now)
    rotated_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["organization"], name="messaging_callback_secret_org")
        ]

    def __str__(self) -> str:
        return f"callback secret of {self.organization_id}"


# Broadcasts (campaigns) live in their own sub-package of the messaging app.
from .broadcasts.models import Broadcast, BroadcastRecipient  # noqa: E402,F401
