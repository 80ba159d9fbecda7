"""The agent resource (Document 3, 2.1): configuration, status and deployment.

Every update keeps the configuration it replaced as an `AgentVersion` and raises
`version`. `active_conversations`, `conversation_count` and `total_tokens` are counters
maintained by the runtime so the list answers without aggregating per row.
"""

from __future__ import annotations

from django.db import models
from django.utils import timezone

from platform_core.ids import PublicIdField
from platform_core.tenancy.models import TenantModel


class AgentStatus(models.TextChoices):
    DRAFT = "draft"
    ACTIVE = "active"


class DeployChannel(models.TextChoices):
    WEBHOOK = "webhook"
    SMS = "sms"
    WHATSAPP = "whatsapp"
    VOICE = "voice"
    RCS = "rcs"


class Agent(TenantModel):
    id = PublicIdField(prefix="agt")
    name = models.CharField(max_length=200)
    type = models.CharField(max_length=16, default="chatbot")
    model = models.CharField(max_length=100)
    system_prompt = models.TextField(blank=True, default="")
    tools = models.JSONField(default=list, blank=True)
    safety_config = models.JSONField(default=dict, blank=True)
    channels = models.JSONField(default=list, blank=True)
    status = models.CharField(max_length=8, choices=AgentStatus.choices,
                              default=AgentStatus.DRAFT)
    version = models.PositiveIntegerField(default=1)
    config = models.JSONField(default=dict, blank=True)  # {"deployment": {...}} once deployed
    # Deployment binding, denormalised from config.deployment for the inbound lookup.
    deploy_channel = models.CharField(max_length=8, choices=DeployChannel.choices,
                                      blank=True, default="")
    deploy_phone_number = models.CharField(max_length=32, blank=True, default="")
    # Maintained counters (the list's extras).
    active_conversations = models.PositiveIntegerField(default=0)
    conversation_count = models.PositiveIntegerField(default=0)
    total_tokens = models.BigIntegerField(default=0)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        indexes = [
            models.Index(fields=["organization", "status", "created_at"],
                         name="agents_agent_org_status"),
            models.Index(fields=["organization", "created_at"], name="agents_agent_org_created"),
            models.Index(fields=["organization", "deploy_channel", "deploy_phone_number"],
                         name="agents_agent_binding"),
        ]


class AgentVersion(TenantModel):
    """The configuration an update replaced (immutable)."""

    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="versions")
    version = models.PositiveIntegerField()
    snapshot = models.JSONField()
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["agent", "version"],
                                               name="agents_version_unique")]


class AgentConversation(TenantModel):
    """The runtime's state of one conversation an agent took (agents/runtime/).

    `active` mirrors "the agent leads this live thread" so `Agent.active_conversations`
    moves by one exactly when it flips; `unresolved_turns` counts the agent's answers since
    the customer last signalled the matter solved (the escalation rule). Keyed by the
    conversation id (not a foreign key) so deleting the agent keeps the history.
    """

    conversation_id = models.CharField(max_length=40)
    agent_id = models.CharField(max_length=40)
    active = models.BooleanField(default=False)
    turns = models.PositiveIntegerField(default=0)
    unresolved_turns = models.PositiveIntegerField(default=0)
    total_tokens = models.BigIntegerField(default=0)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["organization", "conversation_id"],
                                               name="agents_conversation_unique")]
        indexes = [models.Index(fields=["organization", "agent_id"],
                                name="agents_conversation_agent")]
