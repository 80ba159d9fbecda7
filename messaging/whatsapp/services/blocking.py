"""The block list: a blocked user's inbound messages and calls are dropped (inbound.py)
and sends to it are refused (422 WHATSAPP_USER_BLOCKED)."""

from __future__ import annotations

from typing import Any

from django.db import transaction

from platform_core.audit.services import audit_record
from platform_core.errors import validation_error

from ..gateway import gateway_for
from ..models import BlockedUser
from . import recipients
from .common import default_connection

MAX_USERS = 100


def _resolved(organization, users: Any) -> list[tuple[str, str | None]]:
    if not isinstance(users, list) or not users:
        raise validation_error("block_users", 'block_users is a list of {"user": ...} objects.')
    if len(users) > MAX_USERS:
        raise validation_error("block_users", f"At most {MAX_USERS} users per request.")
    seen: dict[str, str | None] = {}
    for i, item in enumerate(users):
        value = item.get("user") if isinstance(item, dict) else item
        if not isinstance(value, str) or not value.strip():
            raise validation_error(f"block_users[{i}].user",
                                   "A phone number or a contact id is required.")
        phone, contact_id = recipients.resolve(organization, value,
                                               field=f"block_users[{i}].user")
        seen.setdefault(phone, contact_id)
    return list(seen.items())


def block(*, organization, principal, users: Any) -> dict[str, Any]:
    targets = _resolved(organization, users)
    connection = default_connection(organization)
    gateway_for(organization).block_users(connection.phone_number_id, [p for p, _ in targets])
    with transaction.atomic():
        rows = BlockedUser.objects.for_organization(organization)
        existing = set(rows.filter(phone__in=[p for p, _ in targets])
                       .values_list("phone", flat=True))
        added = [BlockedUser(organization=organization, phone=p, contact_id=c)
                 for p, c in targets if p not in existing]
        BlockedUser.objects.bulk_create(added, ignore_conflicts=True)
        audit_record(action="whatsapp.users.blocked", organization=organization,
                     principal=principal, target_type="whatsapp_block_list",
                     metadata={"count": len(added)})
    return {"added_users": [{"user": b.phone, "contact_id": b.contact_id} for b in added],
            "already_blocked": sorted(existing)}


def unblock(*, organization, principal, users: Any) -> dict[str, Any]:
    targets = _resolved(organization, users)
    connection = default_connection(organization)
    gateway_for(organization).unblock_users(connection.phone_number_id,
                                            [p for p, _ in targets])
    with transaction.atomic():
        rows = BlockedUser.objects.for_organization(organization).filter(
            phone__in=[p for p, _ in targets])
        removed = sorted(rows.values_list("phone", flat=True))
        rows.delete()
        audit_record(action="whatsapp.users.unblocked", organization=organization,
                     principal=principal, target_type="whatsapp_block_list",
                     metadata={"count": len(removed)})
    return {"removed_users": [{"user": p} for p in removed],
            "not_blocked": sorted({p for p, _ in targets} - set(removed))}
