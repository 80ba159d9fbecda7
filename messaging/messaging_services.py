"""Messaging services: a pool of senders (sticky per recipient), opt-out handling, an
inbound webhook and a default status callback. Changes are audited."""

from __future__ import annotations

from typing import Any

from django.db import transaction

from platform_core.audit.services import audit_record
from platform_core.errors import validation_error
from platform_core.identity.principal import Principal

from . import validation
from .models import MessagingService, StickySender


def _clean_senders(organization, senders: Any) -> list[dict[str, str]]:
    if senders in (None, ""):
        return []
    if not isinstance(senders, list):
        raise validation_error("senders", 'senders is a list of {"channel", "from"} objects.')
    if len(senders) > 400:
        raise validation_error("senders", "At most 400 senders per messaging service.")
    cleaned: list[dict[str, str]] = []
    seen: set[tuple[str, str]] = set()
    for item in senders:
        if not isinstance(item, dict) or not item.get("channel") or not item.get("from"):
            raise validation_error("senders", 'Each sender is {"channel": ..., "from": ...}.')
        channel = validation.check_channel(item["channel"], field="senders")
        address = validation.normalize_sender(channel, str(item["from"]),
                                              default_country=organization.default_country,
                                              field="senders")
        if (channel, address) not in seen:
            seen.add((channel, address))
            cleaned.append({"channel": channel, "from": address})
    return cleaned


_SERVICE_FIELDS = ("name", "senders", "sticky_sender", "inbound_webhook_url", "status_callback",
                   "opt_out_handling", "shorten_links")


def _clean_service_changes(organization, changes: dict[str, Any]) -> dict[str, Any]:
    cleaned = dict(changes)
    if "senders" in cleaned:
        cleaned["senders"] = _clean_senders(organization, cleaned["senders"])
    for field in ("inbound_webhook_url", "status_callback"):
        if field in cleaned:
            cleaned[field] = validation.check_callback_url(cleaned[field], field=field)
    return cleaned


def messaging_service_create(*, organization, principal: Principal | None, name: str,
                             request=None, **fields: Any) -> MessagingService:
    fields = _clean_service_changes(organization, {k: v for k, v in fields.items()
                                                   if k in _SERVICE_FIELDS})
    with transaction.atomic():
        service = MessagingService.objects.for_organization(organization).create(
            organization=organization, name=name, **fields)
        audit_record(action="messaging_service.created", organization=organization,
                     principal=principal, target=service, request=request,
                     metadata={"name": name, "senders": len(service.senders)})
    return service


def messaging_service_update(*, service: MessagingService, principal: Principal | None,
                             request=None, **changes: Any) -> MessagingService:
    changes = _clean_service_changes(service.organization,
                                     {k: v for k, v in changes.items() if k in _SERVICE_FIELDS})
    with transaction.atomic():
        for field, value in changes.items():
            setattr(service, field, value)
        service.save()
        if "senders" in changes:
            # Stickiness to a sender that left the pool ends (the next send re-picks).
            pool = {(s["channel"], s["from"]) for s in service.senders}
            stale = [row.pk for row in StickySender.objects.for_organization(
                service.organization).filter(messaging_service=service)
                if (row.channel, row.sender) not in pool]
            StickySender.objects.for_organization(service.organization).filter(
                pk__in=stale).delete()
        audit_record(action="messaging_service.updated", organization=service.organization,
                     principal=principal, target=service, request=request,
                     metadata={"fields": sorted(changes)})
    return service


def messaging_service_delete(*, service: MessagingService, principal: Principal | None,
                             request=None) -> None:
    with transaction.atomic():
        audit_record(action="messaging_service.deleted", organization=service.organization,
                     principal=principal, target=service, request=request,
                     metadata={"name": service.name})
        service.delete()
