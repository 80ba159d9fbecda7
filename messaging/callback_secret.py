"""The organization's signing secret of status callbacks and inbound webhooks."""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from platform_core.audit.services import audit_record
from platform_core.identity.principal import Principal


def callback_secret_get(organization):
    """The organization's callback signing secret, made on first use."""
    from platform_core.webhooks.signing import generate_secret

    from .models import CallbackSecret

    rows = CallbackSecret.objects.for_organization(organization)
    row = rows.first()
    if row is None:
        CallbackSecret.objects.bulk_create(
            [CallbackSecret(organization=organization, secret=generate_secret())],
            ignore_conflicts=True)
        row = rows.get()
    return row


def callback_secret_rotate(*, organization, principal: Principal | None, request=None):
    from platform_core.webhooks.signing import generate_secret

    with transaction.atomic():
        row = callback_secret_get(organization)
        row.secret = generate_secret()
        row.rotated_at = timezone.now()
        row.save(update_fields=["secret", "rotated_at"])
        audit_record(action="messaging.callback_secret.rotated", organization=organization,
                     principal=principal, target=row, request=request)
    return row
