"""WhatsApp channel configuration records (Document 2, 2.8).

A `Connection` is one phone number of the organization's WhatsApp Business Account,
keyed by Meta's `phone_number_id` (unique per organization). The access token obtained by
the embedded-signup code exchange is NOT kept here: it lives encrypted in the
organization's `ProviderAccount` for the `whatsapp` channel (messaging.providers), which
also sends the messages; disconnecting removes both.

Catalogs, products, flows and calls keep Meta's own id next to ours (`meta_*`): the paths
take our ids (`wct_`, `wpr_`, `wfl_`) except the ones the document keys by Meta's id
(`{phoneNumberId}`, `{businessId}`, `{metaCallId}`).
"""

from __future__ import annotations

from django.db import models
from django.utils import timezone

from platform_core.ids import PublicIdField
from platform_core.tenancy.models import TenantModel


class Connection(TenantModel):
    id = PublicIdField(prefix="wac")
    phone_number_id = models.CharField(max_length=64)
    waba_id = models.CharField(max_length=64)
    business_id = models.CharField(max_length=64, blank=True, default="")
    display_phone_number = models.CharField(max_length=32, blank=True, default="")
    verified_name = models.CharField(max_length=255, blank=True, default="")
    # Our label for the number (the dashboard's name), not Meta's verified name.
    display_name = models.CharField(max_length=255, blank=True, default="")
    quality_rating = models.CharField(max_length=16, blank=True, default="")
    # Where inbound traffic of this number goes: {"queue": ..., "agent_id": ..., ...}.
    routing = models.JSONField(default=dict, blank=True)
    is_default = models.BooleanField(default=False)
    calling_enabled = models.BooleanField(default=False)
    calls_webhook_registered = models.BooleanField(default=False)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["organization", "phone_number_id"],
                                    name="whatsapp_conn_org_phone"),
            models.UniqueConstraint(fields=["organization"], condition=models.Q(is_default=True),
                                    name="whatsapp_conn_one_default"),
        ]
        indexes = [models.Index(fields=["organization", "id"], name="whatsapp_conn_org_id")]

    def __str__(self) -> str:
        return f"{self.phone_number_id} ({self.display_phone_number})"


class ReviewStatus(models.TextChoices):
    APPROVED = "approved"
    PENDING = "pending_review"


PROFILE_FIELDS = ("about", "address", "description", "email", "websites", "vertical",
                  "profile_picture_url")


class BusinessProfile(TenantModel):
    connection = models.OneToOneField(Connection, on_delete=models.CASCADE,
                                      related_name="profile")
    about = models.CharField(max_length=139, blank=True, default="")
    address = models.CharField(max_length=256, blank=True, default="")
    description = models.CharField(max_length=512, blank=True, default="")
    email = models.CharField(max_length=128, blank=True, default="")
    websites = models.JSONField(default=list, blank=True)
    vertical = models.CharField(max_length=32, blank=True, default="")
    profile_picture_url = models.URLField(max_length=2048, blank=True, default="")
    review_status = models.CharField(max_length=16, choices=ReviewStatus.choices,
                                     default=ReviewStatus.APPROVED)
    # The submitted changes while Meta reviews them.
    pending = models.JSONField(default=dict, blank=True)
    submitted_at = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"profile of {self.connection_id}"


class Catalog(TenantModel):
    id = PublicIdField(prefix="wct")
    meta_catalog_id = models.CharField(max_length=64)
    business_id = models.CharField(max_length=64)
    name = models.CharField(max_length=255)
    vertical = models.CharField(max_length=32, default="commerce")
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["organization", "meta_catalog_id"],
                                               name="whatsapp_catalog_org_meta")]
        indexes = [models.Index(fields=["organization", "id"], name="whatsapp_catalog_org_id"),
                   models.Index(fields=["organization", "business_id", "id"],
                                name="whatsapp_catalog_business")]

    def __str__(self) -> str:
        return f"{self.name} ({self.meta_catalog_id})"


class Availability(models.TextChoices):
    IN_STOCK = "in stock"
    OUT_OF_STOCK = "out of stock"
    PREORDER = "preorder"
    AVAILABLE_FOR_ORDER = "available for order"
    DISCONTINUED = "discontinued"


class Product(TenantModel):
    id = PublicIdField(prefix="wpr")
    catalog = models.ForeignKey(Catalog, on_delete=models.CASCADE, related_name="products")
    meta_product_id = models.CharField(max_length=64)
    retailer_id = models.CharField(max_length=100)
    name = models.CharField(max_length=150)
    description = models.CharField(max_length=5000, blank=True, default="")
    # Minor units (cents), as the Graph API takes it; the API also shows "12.34 USD".
    price = models.BigIntegerField()
    currency = models.CharField(max_length=3)
    image_url = models.URLField(max_length=2048)
    url = models.URLField(max_length=2048, blank=True, default="")
    availability = models.CharField(max_length=32, choices=Availability.choices,
                                    default=Availability.IN_STOCK)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["catalog", "retailer_id"],
                                               name="whatsapp_product_catalog_sku")]
        indexes = [models.Index(fields=["organization", "id"], name="whatsapp_product_org_id"),
                   models.Index(fields=["catalog", "id"], name="whatsapp_product_catalog")]

    def __str__(self) -> str:
        return f"{self.retailer_id} {self.name}"


class CallDirection(models.TextChoices):
    INBOUND = "inbound"
    OUTBOUND = "outbound"


class CallStatus(models.TextChoices):
    RINGING = "ringing"
    ACCEPTED = "accepted"
    DECLINED = "declined"
    COMPLETED = "completed"
    MISSED = "missed"
    FAILED = "failed"


class Call(TenantModel):
    id = PublicIdField(prefix="wcl")
    meta_call_id = models.CharField(max_length=128)
    connection = models.ForeignKey(Connection, null=True, on_delete=models.SET_NULL,
                                   related_name="calls")
    direction = models.CharField(max_length=8, choices=CallDirection.choices)
    from_number = models.CharField(max_length=32)
    to_number = models.CharField(max_length=32)
    contact_id = models.CharField(max_length=40, null=True, blank=True)
    status = models.CharField(max_length=16, choices=CallStatus.choices,
                              default=CallStatus.RINGING)
    answered_at = models.DateTimeField(null=True, blank=True)
    ended_at = models.DateTimeField(null=True, blank=True)
    duration_seconds = models.PositiveIntegerField(default=0)
    # Business-initiated minutes are billed (conf.CALL_PRICE_PER_MINUTE); USD.
    cost = models.DecimalField(max_digits=12, decimal_places=4, default=0)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["organization", "meta_call_id"],
                                               name="whatsapp_call_org_meta")]
        indexes = [models.Index(fields=["organization", "id"], name="whatsapp_call_org_id"),
                   models.Index(fields=["organization", "created_at"],
                                name="whatsapp_call_org_created"),
                   models.Index(fields=["connection"], name="whatsapp_call_connection")]

    def __str__(self) -> str:
        return f"{self.meta_call_id} {self.direction} {self.status}"


class BlockedUser(TenantModel):
    id = PublicIdField(prefix="wbu")
    phone = models.CharField(max_length=32)
    contact_id = models.CharField(max_length=40, null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["organization", "phone"],
                                               name="whatsapp_blocked_org_phone")]
        indexes = [models.Index(fields=["organization", "id"], name="whatsapp_blocked_org_id")]

    def __str__(self) -> str:
        return f"blocked {self.phone}"


class FlowStatus(models.TextChoices):
    DRAFT = "draft"
    PUBLISHED = "published"


FLOW_CATEGORIES = ("APPOINTMENT_BOOKING", "LEAD_GENERATION", "CONTACT_US", "CUSTOMER_SUPPORT",
                   "SURVEY", "OTHER")


class Flow(TenantModel):
    id = PublicIdField(prefix="wfl")
    meta_flow_id = models.CharField(max_length=64)
    waba_id = models.CharField(max_length=64)
    name = models.CharField(max_length=200)
    categories = models.JSONField(default=list)
    status = models.CharField(max_length=16, choices=FlowStatus.choices,
                              default=FlowStatus.DRAFT)
    definition = models.JSONField(null=True, blank=True)
    json_version = models.CharField(max_length=16, blank=True, default="")
    published_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        indexes = [models.Index(fields=["organization", "id"], name="whatsapp_flow_org_id")]

    def __str__(self) -> str:
        return f"{self.name} ({self.status})"


class FlowSend(TenantModel):
    """One flow message: its `flow_token` ties the submission back to the flow."""

    flow = models.ForeignKey(Flow, on_delete=models.CASCADE, related_name="sends")
    flow_token = models.CharField(max_length=200)
    message_id = models.CharField(max_length=40)
    to = models.CharField(max_length=32)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["organization", "flow_token"],
                                               name="whatsapp_flowsend_token")]
        indexes = [models.Index(fields=["flow", "created_at"], name="whatsapp_flowsend_flow")]


class FlowSubmission(TenantModel):
    id = PublicIdField(prefix="wfs")
    flow = models.ForeignKey(Flow, on_delete=models.CASCADE, related_name="submissions")
    flow_token = models.CharField(max_length=200)
    message_id = models.CharField(max_length=40)
    contact_id = models.CharField(max_length=40, null=True, blank=True)
    conversation_id = models.CharField(max_length=40, null=True, blank=True)
    response = models.JSONField(default=dict)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        indexes = [models.Index(fields=["flow", "created_at"], name="whatsapp_flowsub_flow")]
