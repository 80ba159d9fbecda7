"""Writes of the ads integration (Document 3, 4.9)."""

from __future__ import annotations

import time
from typing import Any

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from platform_core.audit.services import audit_record
from platform_core.errors import APIError, validation_error
from platform_core.identity.principal import Principal

from . import hashing
from .models import AdAccount, AdAudience, AdCampaign, AdLead
from .platform import FetchFailed, platform_for

MAX_SYNC = 100_000
EVENT_NAMES = {"lead": "Lead", "purchase": "Purchase", "registration": "CompleteRegistration",
               "appointment": "Schedule", "contact": "Contact"}


def connected_account(organization) -> AdAccount | None:
    """The organization's ad account, or None before it connects."""
    return AdAccount.objects.filter(organization=organization).first()


def account_of(organization, *, dataset: bool = False) -> AdAccount:
    account = connected_account(organization)
    if account is None:
        raise APIError("CHANNEL_UNAVAILABLE", "No ad account is connected.")
    if dataset and not account.dataset_id:
        raise APIError("CHANNEL_UNAVAILABLE", "Set the conversions dataset id first "
                       "(PUT /api/v1/ads/conversions/dataset).")
    return account


def connect(*, principal: Principal, ad_account_id: str, access_token: str | None = None,
            code: str | None = None, redirect_uri: str = "", request=None) -> AdAccount:
    """Check the token against the account, then keep it (encrypted): one per organization."""
    organization = principal.organization
    ad_account_id = ad_account_id.removeprefix("act_")
    platform = platform_for(organization)
    via = "token"
    if code is not None:
        access_token, via = platform.exchange_code(code=code, redirect_uri=redirect_uri), "oauth"
    details = platform.account(token=access_token, ad_account_id=ad_account_id)
    with transaction.atomic():
        account, _ = AdAccount.objects.select_for_update().update_or_create(
            organization=organization, defaults={
                "ad_account_id": ad_account_id, "access_token": access_token,
                "name": details["name"][:255], "currency": details["currency"][:3],
                "account_status": details["account_status"][:32], "connected_via": via,
                "connected_by": principal.actor_id, "connected_at": timezone.now()})
        audit_record(action="ads.connected", principal=principal, request=request,
                     target_type="ad_account", target_id=ad_account_id,
                     metadata={"via": via})
    return account


def campaign_create(*, principal: Principal, name: str, channel: str, daily_budget: int,
                    request=None) -> AdCampaign:
    account = account_of(principal.organization)
    external = platform_for(principal.organization).create_campaign(
        token=account.access_token, ad_account_id=account.ad_account_id, name=name,
        channel=channel, daily_budget=daily_budget)
    with transaction.atomic():
        campaign = AdCampaign.objects.create(
            organization=principal.organization, name=name, channel=channel,
            daily_budget=daily_budget, status="paused", external_id=external)
        audit_record(action="ads.campaign_created", principal=principal, target=campaign,
                     request=request)
    return campaign


def campaign_update(*, principal: Principal, campaign: AdCampaign, request=None,
                    **changes: Any) -> AdCampaign:
    account = account_of(principal.organization)
    changes = {k: v for k, v in changes.items() if v is not None}
    platform_for(principal.organization).update_campaign(
        token=account.access_token, external_id=campaign.external_id, fields=changes)
    with transaction.atomic():
        for name, value in changes.items():
            setattr(campaign, name, value)
        campaign.save()
        audit_record(action="ads.campaign_updated", principal=principal, target=campaign,
                     request=request, metadata={k: str(v) for k, v in changes.items()})
    return campaign


def campaign_delete(*, principal: Principal, campaign: AdCampaign, request=None) -> None:
    account = account_of(principal.organization)
    platform_for(principal.organization).delete_campaign(token=account.access_token,
                                                         external_id=campaign.external_id)
    with transaction.atomic():
        audit_record(action="ads.campaign_deleted", principal=principal, target=campaign,
                     request=request)
        campaign.delete()


def dataset_set(*, principal: Principal, dataset_id: str, request=None) -> AdAccount:
    account = account_of(principal.organization)
    with transaction.atomic():
        account.dataset_id = dataset_id
        account.save(update_fields=["dataset_id"])
        audit_record(action="ads.dataset_set", principal=principal, request=request,
                     target_type="ad_account", target_id=account.ad_account_id,
                     metadata={"dataset_id": dataset_id})
    return account


def user_data(organization, raw: dict[str, Any]) -> dict[str, Any]:
    """Meta's `user_data`: identifiers normalised and hashed; `ctwa_clid` as given."""
    out: dict[str, Any] = {}
    if raw.get("email") and (h := hashing.email(raw["email"])):
        out["em"] = [h]
    if raw.get("phone") and (h := hashing.phone(raw["phone"],
                                                default_country=organization.default_country)):
        out["ph"] = [h]
    if raw.get("external_id") and (h := hashing.external_id(raw["external_id"])):
        out["external_id"] = [h]
    if raw.get("ctwa_clid"):
        out["ctwa_clid"] = raw["ctwa_clid"].strip()
    if not out:
        raise validation_error("user_data", "user_data needs at least one of phone, email, "
                               "external_id, ctwa_clid.")
    return out


def conversion_send(*, principal: Principal, outcome: str, user: dict[str, Any],
                    event_time: int | None, channel: str, value=None, currency: str = "",
                    event_id: str = "", test_event_code: str | None = None) -> dict[str, Any]:
    organization = principal.organization
    account = account_of(organization, dataset=True)
    event: dict[str, Any] = {
        "event_name": EVENT_NAMES[outcome], "event_time": event_time or int(time.time()),
        "action_source": "business_messaging", "messaging_channel": channel,
        "user_data": user_data(organization, user)}
    if event_id:
        event["event_id"] = event_id
    if value is not None:
        event["custom_data"] = {"value": float(value),
                                "currency": currency or account.currency or "USD"}
    answer = platform_for(organization).send_events(
        token=account.access_token, dataset_id=account.dataset_id, events=[event],
        test_event_code=test_event_code)
    return {"event_name": event["event_name"], "event_time": event["event_time"],
            "events_received": int(answer.get("events_received") or 0),
            "fbtrace_id": answer.get("fbtrace_id"),
            "user_data": event["user_data"]}


# -- leads ------------------------------------------------------------------------------


def _leads_of(batch: dict[str, Any]) -> list[dict[str, Any]]:
    leads: list[dict[str, Any]] = []
    for entry in batch.get("entry") or []:
        for change in (entry or {}).get("changes") or []:
            if (change or {}).get("field") == "leadgen" and isinstance(change.get("value"),
                                                                        dict):
                leads.append(change["value"])
    for lead in batch.get("leads") or []:
        if isinstance(lead, dict):
            leads.append({**lead, "leadgen_id": lead.get("leadgen_id") or lead.get("id")})
    return leads


def _fields(field_data: list[dict]) -> dict[str, str]:
    found: dict[str, str] = {}
    for item in field_data or []:
        if not isinstance(item, dict):
            continue
        values = item.get("values") or []
        if values and isinstance(values[0], str):
            found[str(item.get("name", "")).lower()] = values[0]
    return found


def _contact_for(organization, fields: dict[str, str]) -> tuple[str | None, bool]:
    """(contact id, created) for the lead's identity; (None, False) without one."""
    from contacts import services as contacts
    from contacts.models import Contact
    from contacts.normalize import parse_email, parse_phone

    email = parse_email(fields.get("email", ""))
    phone = parse_phone(fields.get("phone_number") or fields.get("phone", ""),
                        default_country=organization.default_country)
    if not (email or phone):
        return None, False
    query = Q()
    if email:
        query |= Q(email=email)
    if phone:
        query |= Q(phone=phone)
    existing = Contact.objects.filter(query).first()
    if existing is not None:
        return existing.pk, False
    full = (fields.get("full_name") or "").strip().split(" ", 1)
    contact = contacts.contact_create(
        organization=organization, principal=None, phone=phone, email=email,
        first_name=fields.get("first_name") or full[0],
        last_name=fields.get("last_name") or (full[1] if len(full) > 1 else ""),
        tags=["ad-lead"])
    return contact.pk, True


def leads_ingest(*, organization, batch: dict[str, Any]) -> dict[str, int]:
    """Turn a lead-webhook batch into contacts. A lead whose fetch fails is kept `pending`
    (retried by beat) and the rest of the batch goes on."""
    account = account_of(organization)
    platform = platform_for(organization)
    counts = dict.fromkeys(("received", "fetched", "fetch_failures", "skipped_no_contact",
                            "created", "updated", "duplicates"), 0)
    seen: set[str] = set()
    for lead in _leads_of(batch):
        counts["received"] += 1
        leadgen_id = str(lead.get("leadgen_id") or "")[:64]
        if not leadgen_id:
            counts["skipped_no_contact"] += 1
            continue
        if leadgen_id in seen:
            counts["duplicates"] += 1
            continue
        seen.add(leadgen_id)
        outcome = ingest_one(organization=organization, platform=platform, account=account,
                             leadgen_id=leadgen_id, form_id=str(lead.get("form_id") or "")[:64],
                             field_data=lead.get("field_data"))
        for name in outcome:
            counts[name] += 1
    return counts


def ingest_one(*, organization, platform, account, leadgen_id: str, form_id: str,
               field_data) -> list[str]:
    outcome: list[str] = []
    with transaction.atomic():
        record, _ = AdLead.objects.select_for_update().get_or_create(
            organization=organization, leadgen_id=leadgen_id,
            defaults={"form_id": form_id, "status": "pending"})
        resubmitted = record.status == "ingested"
        if not isinstance(field_data, list):
            try:
                field_data = platform.fetch_lead(token=account.access_token,
                                                 leadgen_id=leadgen_id)
                outcome.append("fetched")
            except FetchFailed:
                record.status, record.attempts = "pending", record.attempts + 1
                record.save()
                return [*outcome, "fetch_failures"]
        contact_id, created = _contact_for(organization, _fields(field_data))
        if contact_id is None:
            record.status = "no_contact"
            record.save()
            return [*outcome, "skipped_no_contact"]
        record.status, record.contact_id = "ingested", contact_id
        record.save()
        outcome.append("created" if created and not resubmitted else "updated")
    return outcome


def retry_pending_leads(*, batch: int = 200, max_attempts: int = 10) -> int:
    """Beat: fetch again the leads a batch could not fetch."""
    from platform_core.tenancy.context import tenant_context

    pending = list(AdLead.objects.dangerously_unscoped().select_related("organization")
                   .filter(status="pending", attempts__lt=max_attempts)
                   .order_by("updated_at")[:batch])
    done = 0
    for lead in pending:
        with tenant_context(lead.organization):
            account = connected_account(lead.organization)
            if account is None:
                continue
            outcome = ingest_one(organization=lead.organization,
                                 platform=platform_for(lead.organization), account=account,
                                 leadgen_id=lead.leadgen_id, form_id=lead.form_id,
                                 field_data=None)
            done += "fetch_failures" not in outcome
    return done


# -- audiences --------------------------------------------------------------------------


def _segment(segment_id: str):
    from contacts.segments.models import Segment

    segment = Segment.objects.filter(pk=segment_id).first()
    if segment is None:
        raise validation_error("segment_id", "No segment with this id.")
    return segment


def audience_create(*, principal: Principal, name: str, segment_id: str,
                    request=None) -> AdAudience:
    account = account_of(principal.organization)
    _segment(segment_id)
    external = platform_for(principal.organization).create_audience(
        token=account.access_token, ad_account_id=account.ad_account_id, name=name)
    with transaction.atomic():
        audience = AdAudience.objects.create(organization=principal.organization, name=name,
                                             segment_id=segment_id, external_id=external)
        audit_record(action="ads.audience_created", principal=principal, target=audience,
                     request=request)
    return audience


def audience_sync(*, principal: Principal, audience: AdAudience, mode: str,
                  segment_id: str | None = None) -> dict[str, Any]:
    from contacts.segments.models import SegmentMembership

    organization = principal.organization
    account = account_of(organization)
    segment = _segment(segment_id or audience.segment_id)
    members = (SegmentMembership.objects.filter(segment=segment).order_by("contact_id")
               .values_list("contact__email", "contact__phone")[:MAX_SYNC + 1])
    rows: list[list[str]] = []
    truncated = False
    matched = 0
    for index, (email, phone) in enumerate(members.iterator(chunk_size=5000)):
        if index == MAX_SYNC:
            truncated = True
            break
        matched += 1
        row = [hashing.email(email or "") or "",
               hashing.phone(phone or "", default_country=organization.default_country) or ""]
        if any(row):
            rows.append(row)
    received = platform_for(organization).audience_users(
        token=account.access_token, audience_id=audience.external_id, rows=rows, mode=mode)
    result = {"mode": mode, "matched": matched, "sent": len(rows), "num_received": received,
              "truncated": truncated}
    audience.last_synced_at = timezone.now()
    audience.last_sync = result
    if segment_id:
        audience.segment_id = segment_id
    audience.save(update_fields=["last_synced_at", "last_sync", "segment_id"])
    return result


def audience_delete(*, principal: Principal, audience: AdAudience, request=None) -> None:
    account = account_of(principal.organization)
    platform_for(principal.organization).delete_audience(token=account.access_token,
                                                         audience_id=audience.external_id)
    with transaction.atomic():
        audit_record(action="ads.audience_deleted", principal=principal, target=audience,
                     request=request)
        audience.delete()
