"""Side conversations (child threads with outside participants) and co-browse sessions."""

from __future__ import annotations

from django.db import models
from django.utils import timezone

from platform_core.ids import PublicIdField
from platform_core.tenancy.models import TenantModel


class SideConversation(TenantModel):
    id = PublicIdField(prefix="scv")
    conversation = models.ForeignKey("conversations.Conversation", on_delete=models.CASCADE,
                                     related_name="side_conversations")
    subject = models.CharField(max_length=200, blank=True, default="")
    external_participants = models.JSONField(default=list)
    status = models.CharField(max_length=8, default="open")  # open, resolved
    created_by = models.CharField(max_length=64, blank=True, default="")
    message_count = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(auto_now=True)
    resolved_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-id"]
        indexes = [models.Index(fields=["conversation", "id"], name="side_conv_conv_id")]


class SideMessage(TenantModel):
    id = PublicIdField(prefix="scm")
    side_conversation = models.ForeignKey(SideConversation, on_delete=models.CASCADE,
                                          related_name="messages")
    body = models.TextField()
    sent_by = models.CharField(max_length=64, blank=True, default="")
    # The messaging messages (`msg_`) that carried it out, one per reachable participant.
    message_ids = models.JSONField(default=list, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["id"]
        indexes = [models.Index(fields=["side_conversation", "id"], name="side_msg_side_id")]


class CobrowseStatus(models.TextChoices):
    REQUESTED = "requested"
    ACTIVE = "active"
    ENDED = "ended"


class CobrowseSession(TenantModel):
    id = PublicIdField(prefix="cbs")
    conversation = models.ForeignKey("conversations.Conversation", on_delete=models.CASCADE,
                                     related_name="cobrowse_sessions")
    status = models.CharField(max_length=10, choices=CobrowseStatus.choices,
                              default=CobrowseStatus.REQUESTED)
    room_name = models.CharField(max_length=200)
    visitor_id = models.CharField(max_length=200, null=True, blank=True)
    control = models.BooleanField(default=False, help_text="The visitor's standing consent.")
    requested_at = models.DateTimeField(default=timezone.now)
    started_at = models.DateTimeField(null=True, blank=True)
    ended_at = models.DateTimeField(null=True, blank=True)
    ended_by = models.CharField(max_length=8, null=True, blank=True)
    agent_user_id = models.CharField(max_length=64, null=True, blank=True)

    class Meta:
        ordering = ["-id"]
        indexes = [models.Index(fields=["conversation", "id"], name="cobrowse_conv_id")]
