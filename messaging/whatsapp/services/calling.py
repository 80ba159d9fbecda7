"""WhatsApp calling: settings per number (cached), outbound calls, call permissions,
answering inbound calls, and the call log fed by the `calls` webhook (inbound.py)."""

from __future__ import annotations

import math
import secrets
from datetime import UTC, datetime
from typing import Any

from django.core.cache import cache
from django.db import IntegrityError, transaction
from django.http import Http404
from django.utils import timezone

from platform_core.api.serialization import iso_utc
from platform_core.audit.services import audit_record
from platform_core.errors import APIError
from platform_core.events.bus import emit

from .. import conf
from ..gateway import account_for, gateway_for
from ..models import Call, CallDirection, CallStatus, Connection
from . import recipients
from .common import connection_get, default_connection


def _cache_key(organization, phone_number_id: str) -> str:
    return f"whatsapp:calling:{organization.pk}:{phone_number_id}"


def calling_state(*, organization, connection: Connection) -> dict[str, Any]:
    """Meta's calling settings of the number, cached `WHATSAPP_CALLING_CACHE_SECONDS`."""
    key = _cache_key(organization, connection.phone_number_id)
    cached = cache.get(key)
    if cached is not None:
        return {**cached, "cached": True}
    settings = gateway_for(organization).calling_settings(connection.phone_number_id)
    state = {"phone_number_id": connection.phone_number_id,
             "status": str(settings.get("status") or "DISABLED").upper(),
             "settings": settings, "calls_webhook_registered":
             connection.calls_webhook_registered,
             "fetched_at": iso_utc(timezone.now())}
    cache.set(key, state, conf.calling_cache_seconds())
    return {**state, "cached": False}


def set_calling(*, organization, principal, phone_number_id: str, enabled: bool
                ) -> dict[str, Any]:
    connection = connection_get(organization, phone_number_id)
    gateway_for(organization).set_calling(connection.phone_number_id, enabled)
    with transaction.atomic():
        changed = connection.calling_enabled != enabled
        connection.calling_enabled = enabled
        connection.save(update_fields=["calling_enabled", "updated_at"])
        if changed:
            audit_record(action="whatsapp.calling." + ("enabled" if enabled else "disabled"),
                         organization=organization, principal=principal, target=connection)
    cache.delete(_cache_key(organization, connection.phone_number_id))
    return {"phone_number_id": connection.phone_number_id,
            "status": "ENABLED" if enabled else "DISABLED", "changed": changed}


def register_webhook(*, organization, principal, phone_number_id: str) -> dict[str, Any]:
    """Subscribe the app to the `calls` field, once: a repeated call changes nothing."""
    from messaging.inbound.public_urls import webhook_url

    connection = connection_get(organization, phone_number_id)
    callback = webhook_url(organization, "whatsapp_cloud")
    if connection.calls_webhook_registered:
        return {"phone_number_id": connection.phone_number_id, "field": "calls",
                "callback_url": callback, "registered": True, "already_registered": True}
    account = account_for(organization)
    verify_token = account.setting("verify_token") if account is not None else None
    if account is not None and not verify_token:
        verify_token = secrets.token_urlsafe(24)
        credentials = account.credentials
        credentials["verify_token"] = verify_token
        account.credentials = credentials
        account.save(update_fields=["credentials_encrypted", "updated_at"])
    gateway_for(organization).subscribe_calls(callback, str(verify_token or ""))
    with transaction.atomic():
        connection.calls_webhook_registered = True
        connection.save(update_fields=["calls_webhook_registered", "updated_at"])
        audit_record(action="whatsapp.calling.webhook_registered", organization=organization,
                     principal=principal, target=connection)
    cache.delete(_cache_key(organization, connection.phone_number_id))
    return {"phone_number_id": connection.phone_number_id, "field": "calls",
            "callback_url": callback, "registered": True, "already_registered": False}


def permissions(*, organization, contact_id: str) -> dict[str, Any]:
    phone, contact = recipients.resolve(organization, contact_id, field="contact_id")
    connection = default_connection(organization)
    answer = gateway_for(organization).call_permissions(connection.phone_number_id, phone)
    return {"contact_id": contact, "phone": phone,
            "phone_number_id": connection.phone_number_id,
            "permission": answer.get("permission") or {"status": "no_permission"},
            "actions": answer.get("actions") or []}


def _can_call(answer: dict[str, Any]) -> bool:
    for action in answer.get("actions") or []:
        if isinstance(action, dict) and action.get("action_name") == "start_call":
            return bool(action.get("can_perform_action"))
    status = (answer.get("permission") or {}).get("status")
    return status in ("granted", "temporary")


def call_start(*, organization, principal, to: str, phone_number_id: str | None,
               session: dict | None) -> Call:
    phone, contact_id = recipients.resolve(organization, to)
    connection = default_connection(organization, phone_number_id)
    if not connection.calling_enabled:
        raise APIError("WHATSAPP_CALLING_DISABLED",
                       details={"phone_number_id": connection.phone_number_id})
    recipients.refuse_blocked(organization, phone)
    gateway = gateway_for(organization)
    if not _can_call(gateway.call_permissions(connection.phone_number_id, phone)):
        raise APIError("WHATSAPP_CALL_PERMISSION_REQUIRED", details={"to": phone})
    meta_call_id = gateway.start_call(connection.phone_number_id, phone, session)
    with transaction.atomic():
        call = Call.objects.for_organization(organization).create(
            organization=organization, meta_call_id=meta_call_id, connection=connection,
            direction=CallDirection.OUTBOUND, from_number=_business_number(connection),
            to_number=phone, contact_id=contact_id)
        audit_record(action="whatsapp.call.started", organization=organization,
                     principal=principal, target=call)
        emit(organization=organization, type="whatsapp.call.started", data=_event(call))
    return call


def _business_number(connection: Connection) -> str:
    digits = "".join(c for c in connection.display_phone_number if c.isdigit())
    return f"+{digits}" if digits else connection.phone_number_id


def _event(call: Call) -> dict[str, Any]:
    return {"call_id": call.pk, "meta_call_id": call.meta_call_id,
            "direction": call.direction, "status": call.status,
            "contact_id": call.contact_id, "duration_seconds": call.duration_seconds}


def call_answer(*, organization, principal, meta_call_id: str, accept: bool,
                session: dict | None) -> Call:
    with transaction.atomic():
        call = (Call.objects.for_organization(organization).select_for_update(of=("self",))
                .select_related("connection").filter(meta_call_id=meta_call_id[:128]).first())
        if call is None:
            raise Http404
        if call.direction != CallDirection.INBOUND or call.status != CallStatus.RINGING:
            raise APIError("WHATSAPP_CALL_NOT_RINGING",
                           details={"status": call.status, "direction": call.direction})
        phone_number_id = call.connection.phone_number_id if call.connection else ""
        gateway_for(organization).call_action(phone_number_id, call.meta_call_id,
                                              "accept" if accept else "reject", session)
        now = timezone.now()
        if accept:
            call.status, call.answered_at = CallStatus.ACCEPTED, now
        else:
            call.status, call.ended_at = CallStatus.DECLINED, now
        call.save()
        audit_record(action="whatsapp.call." + ("accepted" if accept else "declined"),
                     organization=organization, principal=principal, target=call)
        emit(organization=organization, type="whatsapp.call." + call.status, data=_event(call))
    return call


# --- The calls webhook (Meta -> us) ------------------------------------------------------

_OUTBOUND_STATUS = {"RINGING": CallStatus.RINGING, "ACCEPTED": CallStatus.ACCEPTED,
                    "REJECTED": CallStatus.DECLINED}


def _moment(value: Any) -> datetime | None:
    try:
        return datetime.fromtimestamp(int(value), tz=UTC)
    except (TypeError, ValueError, OverflowError, OSError):
        return None


def apply_call_webhook(*, organization, metadata: dict[str, Any], value: dict[str, Any]
                       ) -> int:
    """Apply one `calls` change: `calls[]` (connect / terminate) and `statuses[]`."""
    applied = 0
    phone_number_id = str(metadata.get("phone_number_id") or "")
    connection = (Connection.objects.for_organization(organization)
                  .filter(phone_number_id=phone_number_id).first())
    for item in value.get("calls") or []:
        if isinstance(item, dict) and item.get("id"):
            applied += _apply_call_item(organization, connection, item)
    for item in value.get("statuses") or []:
        if not isinstance(item, dict) or not item.get("id"):
            continue
        status = _OUTBOUND_STATUS.get(str(item.get("status", "")).upper())
        if status is None:
            continue
        with transaction.atomic():
            call = (Call.objects.for_organization(organization).select_for_update()
                    .filter(meta_call_id=str(item["id"])[:128]).first())
            if call is None or call.status not in (CallStatus.RINGING,):
                continue
            call.status = status
            if status == CallStatus.ACCEPTED:
                call.answered_at = _moment(item.get("timestamp")) or timezone.now()
            call.save()
            emit(organization=organization, type="whatsapp.call." + status, data=_event(call))
            applied += 1
    return applied


def _apply_call_item(organization, connection, item: dict[str, Any]) -> int:
    event = str(item.get("event") or "").lower()
    meta_call_id = str(item["id"])[:128]
    rows = Call.objects.for_organization(organization)
    if event == "connect" and str(item.get("direction", "")).upper() != "BUSINESS_INITIATED":
        from messaging.acceptance import contact_id_for

        sender = "+" + "".join(c for c in str(item.get("from") or "") if c.isdigit())
        if recipients.is_blocked(organization, sender):
            return 0  # a blocked user's call is dropped like its messages
        try:
            with transaction.atomic():
                call = rows.create(
                    organization=organization, meta_call_id=meta_call_id,
                    connection=connection, direction=CallDirection.INBOUND,
                    from_number=sender[:32],
                    to_number=("+" + "".join(c for c in str(item.get("to") or "")
                                             if c.isdigit()))[:32],
                    contact_id=contact_id_for(organization.pk, "whatsapp", sender),
                    created_at=_moment(item.get("timestamp")) or timezone.now())
                emit(organization=organization, type="whatsapp.call.ringing",
                     data=_event(call))
        except IntegrityError:
            return 0  # a replayed webhook
        return 1
    if event == "terminate":
        with transaction.atomic():
            call = rows.select_for_update().filter(meta_call_id=meta_call_id).first()
            if call is None or call.ended_at is not None and call.status in (
                    CallStatus.COMPLETED, CallStatus.MISSED, CallStatus.FAILED):
                return 0
            try:
                duration = max(0, int(item.get("duration") or 0))
            except (TypeError, ValueError):
                duration = 0
            failed = str(item.get("status", "")).upper() == "FAILED"
            call.duration_seconds = duration
            call.ended_at = _moment(item.get("end_time")) or timezone.now()
            if call.status == CallStatus.DECLINED:
                pass
            elif failed:
                call.status = CallStatus.FAILED
            elif duration > 0:
                call.status = CallStatus.COMPLETED
            else:
                call.status = CallStatus.MISSED
            if call.direction == CallDirection.OUTBOUND and duration > 0:
                call.cost = conf.call_price_per_minute() * math.ceil(duration / 60)
            call.save()
            emit(organization=organization, type="whatsapp.call.ended", data=_event(call))
        return 1
    return 0
