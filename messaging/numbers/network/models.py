"""Carrier-billing charges, kept for `idempotencyKey` replays and the audit trail."""

from __future__ import annotations

from django.db import models
from django.utils import timezone

from platform_core.ids import PublicIdField
from platform_core.tenancy.models import TenantModel


class CarrierCharge(TenantModel):
    id = PublicIdField(prefix="cbc")
    phone_number = models.CharField(max_length=32)
    amount = models.DecimalField(max_digits=14, decimal_places=4)
    currency = models.CharField(max_length=3)
    description = models.CharField(max_length=140)
    merchant_reference = models.CharField(max_length=128, blank=True, default="")
    idempotency_key = models.CharField(max_length=128, blank=True, default="")
    request_fingerprint = models.CharField(max_length=64)
    payment_id = models.CharField(max_length=128)
    status = models.CharField(max_length=32)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-id"]
        constraints = [models.UniqueConstraint(
            fields=["organization", "idempotency_key"], condition=~models.Q(idempotency_key=""),
            name="carrier_charge_idempotency_unique")]

    def __str__(self) -> str:
        return f"{self.payment_id} {self.amount} {self.currency}"
