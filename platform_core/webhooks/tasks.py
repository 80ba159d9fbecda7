"""Celery tasks of the webhooks family: one attempt, and the beat job that claims due ones.

Tasks take ids (and the claim token), never instances. `acks_late` is on for the whole
project, and the delivery row itself is leased, so a worker killed in the middle of an
attempt loses nothing: the delivery is still `pending` and due again when its lease ends.
"""

from __future__ import annotations

from celery import shared_task

from platform_core.tenancy.context import tenant_context

from . import services
from .models import WebhookDelivery


@shared_task(name="webhooks.deliver", ignore_result=True, acks_late=True)
def deliver_webhook(delivery_id: str, claim_token: str) -> str | None:
    row = (WebhookDelivery.objects.dangerously_unscoped().select_related("organization")
           .only("id", "organization").filter(pk=delivery_id).first())
    if row is None:
        return None
    with tenant_context(row.organization):
        return services.delivery_attempt(delivery_id=delivery_id, claim_token=claim_token)


@shared_task(name="webhooks.dispatch_due", ignore_result=True)
def dispatch_due_webhook_deliveries() -> int:
    """Beat job (config/beat.py): queue every pending delivery whose time has come."""
    return services.deliveries_dispatch_due()
