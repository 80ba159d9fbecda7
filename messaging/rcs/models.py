"""RCS channel configuration records (Document 2, 2.8): brand, agent (bot), test device,
template, catalog product.

    Brand:    draft -> submitted -> verified | rejected      (rejected -> submitted again)
    Agent:    verification_status unverified -> pending -> verified | rejected
              status draft -> verified -> launched (once launched on at least one carrier)
    Template: pending -> approved | rejected                  (a replace goes back to pending)

The decisions come from the provider: Google's management API in live mode, the sandbox
double in test mode (`providers/sandbox.py`). `provider_ref` is the provider's name of
the record (`brands/...`, `brands/.../agents/...`).
"""

from __future__ import annotations

from django.db import models
from django.utils import timezone

from platform_core.ids import PublicIdField
from platform_core.tenancy.models import TenantModel, organization_key


class BrandStatus(models.TextChoices):
    DRAFT = "draft"
    SUBMITTED = "submitted"
    VERIFIED = "verified"
    REJECTED = "rejected"


class VerificationStatus(models.TextChoices):
    UNVERIFIED = "unverified"
    PENDING = "pending"
    VERIFIED = "verified"
    REJECTED = "rejected"


class AgentStatus(models.TextChoices):
    DRAFT = "draft"
    VERIFIED = "verified"
    LAUNCHED = "launched"


class TemplateStatus(models.TextChoices):
    PENDING = "pending"
    APPROVED = "approved"
    REJECTED = "rejected"


class UseCase(models.TextChoices):
    TRANSACTIONAL = "TRANSACTIONAL"
    PROMOTIONAL = "PROMOTIONAL"
    OTP = "OTP"
    MULTI_USE = "MULTI_USE"


class RcsBrand(TenantModel):
    id = PublicIdField(prefix="rbr")
    organization = organization_key(db_index=False)
    name = models.CharField(max_length=100)
    website = models.URLField(max_length=2048, blank=True, default="")
    contact_name = models.CharField(max_length=200, blank=True, default="")
    contact_email = models.EmailField(blank=True, default="")
    status = models.CharField(max_length=16, choices=BrandStatus.choices,
                              default=BrandStatus.DRAFT)
    rejection_reason = models.CharField(max_length=500, blank=True, default="")
    provider_ref = models.CharField(max_length=255, blank=True, default="")
    submitted_at = models.DateTimeField(null=True, blank=True)
    verified_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        indexes = [models.Index(fields=["organization", "id"], name="rcs_brand_org_id")]

    def __str__(self) -> str:
        return f"{self.name} ({self.pk})"


class RcsAgent(TenantModel):
    id = PublicIdField(prefix="rbt")
    organization = organization_key(db_index=False)
    brand = models.ForeignKey(RcsBrand, on_delete=models.PROTECT, related_name="agents")
    display_name = models.CharField(max_length=100)
    description = models.CharField(max_length=100, blank=True, default="")
    logo_url = models.URLField(max_length=2048, blank=True, default="")
    hero_url = models.URLField(max_length=2048, blank=True, default="")
    color = models.CharField(max_length=7, blank=True, default="")
    phone = models.CharField(max_length=32, blank=True, default="")
    email = models.EmailField(blank=True, default="")
    website = models.URLField(max_length=2048, blank=True, default="")
    privacy_url = models.URLField(max_length=2048, blank=True, default="")
    terms_url = models.URLField(max_length=2048, blank=True, default="")
    use_case = models.CharField(max_length=16, choices=UseCase.choices,
                                default=UseCase.MULTI_USE)
    # The carriers the agent asks to launch on (names as the provider spells them).
    carriers = models.JSONField(default=list, blank=True)
    status = models.CharField(max_length=16, choices=AgentStatus.choices,
                              default=AgentStatus.DRAFT)
    verification_status = models.CharField(max_length=16, choices=VerificationStatus.choices,
                                           default=VerificationStatus.UNVERIFIED)
    # {carrier: {"status": "LAUNCHED" | "PENDING" | "REJECTED" | ...}}
    carrier_statuses = models.JSONField(default=dict, blank=True)
    provider_ref = models.CharField(max_length=255, blank=True, default="")
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        indexes = [
            models.Index(fields=["organization", "id"], name="rcs_agent_org_id"),
            # The refresh sweep (tasks.refresh_agents): agents awaiting Google's verdict.
            models.Index(fields=["updated_at"], name="rcs_agent_awaiting",
                         condition=models.Q(verification_status__in=["pending", "verified"],
                                            status__in=["draft", "verified"])),
        ]

    def __str__(self) -> str:
        return f"{self.display_name} ({self.pk})"

    @property
    def provider_agent_id(self) -> str:
        """The provider's agent id (the last segment of `brands/.../agents/<id>`)."""
        return self.provider_ref.rsplit("/", 1)[-1] if self.provider_ref else ""

    @property
    def carriers_launched(self) -> int:
        return sum(1 for v in (self.carrier_statuses or {}).values()
                   if isinstance(v, dict) and v.get("status") == "LAUNCHED")

    @property
    def launched(self) -> bool:
        return self.status == AgentStatus.LAUNCHED or self.carriers_launched > 0


class RcsTestDevice(TenantModel):
    id = PublicIdField(prefix="rtd")
    organization = organization_key(db_index=False)
    agent = models.ForeignKey(RcsAgent, on_delete=models.CASCADE, related_name="devices")
    phone = models.CharField(max_length=32)
    status = models.CharField(max_length=16, default="invited")
    invited_at = models.DateTimeField(default=timezone.now)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["agent", "phone"],
                                               name="rcs_device_agent_phone")]
        indexes = [models.Index(fields=["organization", "id"], name="rcs_device_org_id")]

    def __str__(self) -> str:
        return f"{self.phone} on {self.agent_id}"


class RcsTemplate(TenantModel):
    id = PublicIdField(prefix="rtp")
    organization = organization_key(db_index=False)
    agent = models.ForeignKey(RcsAgent, on_delete=models.CASCADE, related_name="templates")
    name = models.CharField(max_length=64)
    language = models.CharField(max_length=35, default="en")
    body = models.TextField(blank=True, default="")
    media_url = models.URLField(max_length=2048, blank=True, default="")
    # [{"type": "reply" | "url" | "dial", "text": ..., "postback_data" | "url" | "phone"}]
    suggestions = models.JSONField(default=list, blank=True)
    status = models.CharField(max_length=16, choices=TemplateStatus.choices,
                              default=TemplateStatus.PENDING)
    rejection_reason = models.CharField(max_length=500, blank=True, default="")
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["agent", "name"],
                                               name="rcs_template_agent_name")]
        indexes = [models.Index(fields=["organization", "id"], name="rcs_template_org_id")]

    def __str__(self) -> str:
        return f"{self.name} ({self.pk})"


class RcsCatalogProduct(TenantModel):
    """A product of the organization's connected catalog (2.8: only `id` is always there)."""

    id = PublicIdField(prefix="rpd")
    organization = organization_key(db_index=False)
    retailer_id = models.CharField(max_length=100, null=True, blank=True)
    name = models.CharField(max_length=200, null=True, blank=True)
    description = models.CharField(max_length=2000, null=True, blank=True)
    price = models.CharField(max_length=32, null=True, blank=True)
    currency = models.CharField(max_length=3, null=True, blank=True)
    image_url = models.URLField(max_length=2048, null=True, blank=True)
    url = models.URLField(max_length=2048, null=True, blank=True)
    availability = models.CharField(max_length=32, null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        indexes = [
            models.Index(fields=["organization", "id"], name="rcs_product_org_id"),
            models.Index(fields=["organization", "retailer_id"], name="rcs_product_org_sku"),
        ]

    def __str__(self) -> str:
        return f"{self.name or self.retailer_id or self.pk}"
