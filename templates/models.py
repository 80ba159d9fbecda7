"""Message templates, content templates and the denormalized template counters.

A `MessageTemplate` (`tpl_`, Document 2, 2.3) is one locale variant of a named template on
one channel: variants share `(channel, name)` and differ by `language`, each with its own
approval status. WhatsApp and RCS templates carry the rich `components` shape and start
`pending` until the carrier decides; sms, mms and email templates carry plain `content`
and are `approved` at once. Only approved templates send.

A `ContentTemplate` (`ctt_`) is channel-agnostic: per-channel `variants` plus an
author-declared `fallback` chain used when the target channel has no variant of its own.

`TemplateMessageMark` and `TemplateDailyStat` are the denormalized counters template
analytics falls back to when the live scan of messages exceeds its time budget; the
event-bus fan-out handler in `counters.py` keeps them current from `message.*` events.
"""

from __future__ import annotations

from django.db import models
from django.utils import timezone

from platform_core.ids import PublicIdField
from platform_core.tenancy.models import TenantModel


class TemplateChannel(models.TextChoices):
    WHATSAPP = "whatsapp"
    RCS = "rcs"
    SMS = "sms"
    MMS = "mms"
    EMAIL = "email"


# Channels whose templates use the rich `components` shape and need a carrier decision.
RICH_CHANNELS = frozenset({TemplateChannel.WHATSAPP, TemplateChannel.RCS})
APPROVAL_CHANNELS = RICH_CHANNELS


class TemplateStatus(models.TextChoices):
    PENDING = "pending"
    APPROVED = "approved"
    REJECTED = "rejected"
    PAUSED = "paused"
    DISABLED = "disabled"


class TemplateCategory(models.TextChoices):
    UTILITY = "utility"
    MARKETING = "marketing"
    AUTHENTICATION = "authentication"


class MessageTemplate(TenantModel):
    id = PublicIdField(prefix="tpl")
    name = models.CharField(max_length=512)
    channel = models.CharField(max_length=16, choices=TemplateChannel.choices)
    category = models.CharField(max_length=32, choices=TemplateCategory.choices,
                                default=TemplateCategory.UTILITY)
    language = models.CharField(max_length=35)
    status = models.CharField(max_length=16, choices=TemplateStatus.choices,
                              default=TemplateStatus.PENDING)
    components = models.JSONField(default=list, blank=True)
    content = models.TextField(blank=True, default="")
    subject = models.CharField(max_length=998, blank=True, default="")
    # The highest positional placeholder `{{n}}` used (placeholders run 1..n).
    placeholder_count = models.PositiveSmallIntegerField(default=0)
    waba_id = models.CharField(max_length=64, null=True, blank=True)
    rejection_reason = models.CharField(max_length=1000, null=True, blank=True)
    # The variant this one was translated from by `localize` (None for authored ones).
    localized_from = models.ForeignKey("self", null=True, blank=True, on_delete=models.SET_NULL,
                                       related_name="localized_variants")
    # Provider side of the approval (live mode only).
    provider = models.CharField(max_length=64, blank=True, default="")
    provider_template_id = models.CharField(max_length=128, null=True, blank=True)
    submission_attempts = models.PositiveIntegerField(default=0)
    submission_error = models.CharField(max_length=1000, null=True, blank=True)
    submitted_at = models.DateTimeField(null=True, blank=True)
    decided_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["organization", "channel", "name", "language"],
                                    name="tpl_unique_variant"),
        ]
        indexes = [
            models.Index(fields=["organization", "id"], name="tpl_org_id"),
            models.Index(fields=["organization", "status", "id"], name="tpl_org_status"),
            models.Index(fields=["organization", "channel", "id"], name="tpl_org_channel"),
            models.Index(fields=["organization", "waba_id", "id"], name="tpl_org_waba"),
            models.Index(fields=["organization", "channel", "name"], name="tpl_org_family"),
            models.Index(fields=["provider_template_id"], name="tpl_provider_id"),
            # The status sync sweeps pending templates of live organizations.
            models.Index(fields=["updated_at"], name="tpl_pending_sync",
                         condition=models.Q(status="pending")),
        ]

    def __str__(self) -> str:
        return f"{self.name} [{self.channel}/{self.language}] ({self.status})"

    @property
    def is_rich(self) -> bool:
        return self.channel in RICH_CHANNELS


class ContentTemplate(TenantModel):
    id = PublicIdField(prefix="ctt")
    name = models.CharField(max_length=255)
    description = models.CharField(max_length=1000, null=True, blank=True)
    # {"sms": {"body": "..."}, "whatsapp": {"template_name": "...", "language": "en"}, ...}
    variants = models.JSONField(default=dict)
    # Channels tried in order when the target channel has no variant of its own.
    fallback = models.JSONField(default=list, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        indexes = [models.Index(fields=["organization", "id"], name="ctt_org_id")]

    def __str__(self) -> str:
        return f"{self.name} ({self.pk})"


class TemplateMessageMark(TenantModel):
    """What the counters already counted for one templated message (idempotent fan-out)."""

    message_id = models.CharField(max_length=40)
    template = models.ForeignKey(MessageTemplate, on_delete=models.CASCADE, related_name="+")
    campaign_id = models.CharField(max_length=64, blank=True, default="")
    day = models.DateField()
    sent = models.BooleanField(default=False)
    delivered = models.BooleanField(default=False)
    failed = models.BooleanField(default=False)
    opened = models.BooleanField(default=False)
    clicked = models.BooleanField(default=False)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["organization", "message_id"],
                                    name="tpl_mark_unique_message"),
        ]

    def __str__(self) -> str:
        return f"{self.message_id} of {self.template_id}"


class TemplateDailyStat(TenantModel):
    """Per template, day (of the message's creation, UTC) and campaign: counter totals."""

    template = models.ForeignKey(MessageTemplate, on_delete=models.CASCADE,
                                 related_name="daily_stats")
    day = models.DateField()
    campaign_id = models.CharField(max_length=64, blank=True, default="")
    sent = models.PositiveIntegerField(default=0)
    delivered = models.PositiveIntegerField(default=0)
    failed = models.PositiveIntegerField(default=0)
    opened = models.PositiveIntegerField(default=0)
    clicked = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["template", "day", "campaign_id"],
                                    name="tpl_daily_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.template_id} {self.day} {self.campaign_id or '-'}"
