"""Connection lifecycle (embedded signup), default number, labels and routing, unlink,
disconnect, and the business profile.

Connect exchanges the signup `code` for an access token, reads the WABA's numbers and
subscribes our app to the WABA's webhooks; the token goes encrypted into the
organization's `whatsapp` ProviderAccount (which also sends its messages), the numbers
become `Connection`s. Disconnect unsubscribes and removes every connection and the
account's credentials.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.db import transaction
from django.utils import timezone

from messaging.providers.models import ProviderAccount
from platform_core.audit.services import audit_record
from platform_core.errors import validation_error
from platform_core.events.bus import emit

from ..gateway import account_for, gateway_for
from ..models import PROFILE_FIELDS, BusinessProfile, Connection, ReviewStatus
from .common import connection_get


def _store_token(organization, *, token: str, waba_id: str, phone_number_id: str,
                 base_url: str = "") -> None:
    account = account_for(organization)
    if account is None:
        account = ProviderAccount(organization=organization, channel="whatsapp",
                                  provider="whatsapp_cloud", base_url=base_url)
    credentials = account.credentials
    credentials["access_token"] = token
    account.credentials = credentials
    account.provider = "whatsapp_cloud"
    account.config = {**(account.config or {}), "waba_id": waba_id,
                      "phone_number_id": phone_number_id}
    account.enabled = True
    account.save()


def connect(*, organization, principal, code: str, waba_id: str,
            phone_number_id: str | None = None, business_id: str = "") -> list[Connection]:
    gateway = gateway_for(organization, connecting=True)
    token = gateway.exchange_code(code)
    if gateway.live:
        gateway.token = token  # the WABA calls below act with the new token
    numbers = gateway.phone_numbers(waba_id)
    if not numbers:
        raise validation_error("waba_id", "This WhatsApp Business Account has no numbers.")
    ids = [str(n.get("id")) for n in numbers if n.get("id")]
    if phone_number_id and phone_number_id not in ids:
        raise validation_error("phone_number_id",
                               "This number does not belong to the WhatsApp Business Account.")
    gateway.subscribe_app(waba_id)
    default_id = phone_number_id or ids[0]
    with transaction.atomic():
        rows = Connection.objects.for_organization(organization)
        had_default = rows.filter(is_default=True).exclude(phone_number_id__in=ids).exists()
        if not had_default:
            rows.filter(is_default=True).exclude(phone_number_id=default_id).update(
                is_default=False)
        connections = []
        for number in numbers:
            number_id = str(number.get("id") or "")
            if not number_id:
                continue
            connection = rows.filter(phone_number_id=number_id).first() or Connection(
                organization=organization, phone_number_id=number_id)
            connection.waba_id = waba_id
            connection.business_id = business_id or connection.business_id
            connection.display_phone_number = str(number.get("display_phone_number") or "")[:32]
            connection.verified_name = str(number.get("verified_name") or "")[:255]
            connection.quality_rating = str(number.get("quality_rating") or "")[:16]
            connection.is_default = (number_id == default_id if not had_default
                                     else False)
            connection.save()
            BusinessProfile.objects.for_organization(organization).get_or_create(
                organization=organization, connection=connection)
            connections.append(connection)
        account = account_for(organization)
        _store_token(organization, token=token, waba_id=waba_id,
                     phone_number_id=_default_id(organization) or default_id,
                     base_url=account.base_url if account else "")
        audit_record(action="whatsapp.connected", organization=organization,
                     principal=principal, target_type="whatsapp_connection",
                     target_id=waba_id, metadata={"phone_number_ids": ids})
        emit(organization=organization, type="whatsapp.connected",
             data={"waba_id": waba_id, "phone_number_ids": ids})
    return connections


def _default_id(organization) -> str | None:
    return (Connection.objects.for_organization(organization).filter(is_default=True)
            .values_list("phone_number_id", flat=True).first())


def _sync_account_default(organization) -> None:
    account = account_for(organization)
    default = _default_id(organization)
    if account is not None and default:
        account.config = {**(account.config or {}), "phone_number_id": default}
        account.save(update_fields=["config", "updated_at"])


def set_default(*, organization, principal, phone_number_id: str) -> Connection:
    with transaction.atomic():
        connection = connection_get(organization, phone_number_id)
        Connection.objects.for_organization(organization).filter(is_default=True).exclude(
            pk=connection.pk).update(is_default=False)
        connection.is_default = True
        connection.save(update_fields=["is_default", "updated_at"])
        _sync_account_default(organization)
        audit_record(action="whatsapp.connection.default", organization=organization,
                     principal=principal, target=connection)
    return connection


def update(*, organization, principal, phone_number_id: str,
           changes: dict[str, Any]) -> Connection:
    with transaction.atomic():
        connection = connection_get(organization, phone_number_id)
        for field in ("display_name", "routing"):
            if field in changes:
                setattr(connection, field, changes[field])
        connection.save()
        audit_record(action="whatsapp.connection.updated", organization=organization,
                     principal=principal, target=connection, metadata={"fields": sorted(changes)})
    return connection


def unlink(*, organization, principal, phone_number_id: str) -> None:
    connection = connection_get(organization, phone_number_id)
    gateway_for(organization).deregister(connection.phone_number_id)
    with transaction.atomic():
        was_default = connection.is_default
        audit_record(action="whatsapp.connection.unlinked", organization=organization,
                     principal=principal, target=connection)
        connection.delete()
        rows = Connection.objects.for_organization(organization)
        if was_default:
            successor = rows.order_by("created_at").first()
            if successor is not None:
                successor.is_default = True
                successor.save(update_fields=["is_default", "updated_at"])
        if not rows.exists():
            _drop_credentials(organization)
        else:
            _sync_account_default(organization)


def _drop_credentials(organization) -> None:
    account = account_for(organization)
    if account is not None:
        account.delete()  # the token (and the account's other secrets) go with it


def disconnect(*, organization, principal) -> int:
    rows = Connection.objects.for_organization(organization)
    wabas = sorted(set(rows.values_list("waba_id", flat=True)))
    if not wabas and account_for(organization) is None:
        from platform_core.errors import APIError

        raise APIError("WHATSAPP_NOT_CONNECTED")
    if wabas:
        gateway = gateway_for(organization)
        for waba_id in wabas:
            gateway.unsubscribe_app(waba_id)
    with transaction.atomic():
        count = rows.count()
        rows.delete()
        _drop_credentials(organization)
        audit_record(action="whatsapp.disconnected", organization=organization,
                     principal=principal, target_type="whatsapp_connection",
                     target_id=",".join(wabas), metadata={"connections": count})
        emit(organization=organization, type="whatsapp.disconnected",
             data={"waba_ids": wabas, "connections": count})
    return count


# --- Business profile ---------------------------------------------------------------------


def _review_seconds() -> float:
    from django.conf import settings

    return float(getattr(settings, "WHATSAPP_SANDBOX_REVIEW_SECONDS", 60))


def _apply(profile: BusinessProfile, values: dict[str, Any]) -> None:
    for field in PROFILE_FIELDS:
        if field in values and values[field] is not None:
            setattr(profile, field, values[field])


def profile_get(*, organization, connection: Connection) -> BusinessProfile:
    profile, _ = BusinessProfile.objects.for_organization(organization).get_or_create(
        organization=organization, connection=connection)
    gateway = gateway_for(organization)
    if gateway.live:
        remote = gateway.get_profile(connection.phone_number_id)
        _apply(profile, {k: remote.get(k) for k in PROFILE_FIELDS if k in remote})
        if profile.review_status == ReviewStatus.PENDING and all(
                remote.get(k) == v for k, v in profile.pending.items()):
            profile.review_status, profile.pending = ReviewStatus.APPROVED, {}
        profile.save()
    elif profile.review_status == ReviewStatus.PENDING and profile.submitted_at and (
            timezone.now() - profile.submitted_at >= timedelta(seconds=_review_seconds())):
        # The double's review: approved once the review time has passed.
        _apply(profile, profile.pending)
        profile.review_status, profile.pending = ReviewStatus.APPROVED, {}
        profile.save()
    return profile


def profile_update(*, organization, principal, connection: Connection,
                   changes: dict[str, Any]) -> BusinessProfile:
    profile, _ = BusinessProfile.objects.for_organization(organization).get_or_create(
        organization=organization, connection=connection)
    gateway_for(organization).update_profile(connection.phone_number_id, changes)
    with transaction.atomic():
        profile.pending = {**profile.pending, **changes}
        profile.review_status = ReviewStatus.PENDING
        profile.submitted_at = timezone.now()
        profile.save()
        audit_record(action="whatsapp.profile.submitted", organization=organization,
                     principal=principal, target=connection,
                     metadata={"fields": sorted(changes)})
    return profile
