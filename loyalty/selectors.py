"""Reads: the active program, a member's state, the members with loyalty activity."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.db.models import Exists, OuterRef, QuerySet

from contacts.models import Contact
from platform_core.events.models import TrackedEvent, iso_z

from .compute import EXPIRING_SOON_DAYS, Totals, totals_for_contacts
from .models import LoyaltyProgram, ProgramSource
from .program import Program


def program_from_row(row: LoyaltyProgram | None) -> Program:
    if row is None:
        return Program.default()
    meta = {"revision_id": row.revision_id, "source": row.source,
            "created_at": row.created_at, "updated_at": row.updated_at,
            "id": row.pk if row.source == ProgramSource.CUSTOM else "default"}
    if row.source == ProgramSource.DEFAULT:
        return Program.from_config(Program.default().config(), **meta)
    return Program.from_config({"name": row.name, "earnRules": row.earn_rules,
                                "tiers": row.tiers,
                                "pointsExpiryDays": row.points_expiry_days}, **meta)


def program_get(*, organization) -> Program:
    return program_from_row(LoyaltyProgram.objects.for_organization(organization).first())


def program_payload(program: Program) -> dict[str, Any]:
    return {
        "id": program.id,
        **program.config(),
        "program_source": program.source,
        "revision_id": program.revision_id,
        "redemption_event_name": "loyalty.points_redeemed",
        "relevant_event_names": program.relevant_event_names,
        "created_at": iso_z(program.created_at) if program.created_at else None,
        "updated_at": iso_z(program.updated_at) if program.updated_at else None,
    }


def state_payload(program: Program, totals: Totals) -> dict[str, Any]:
    """`balance`, `tier` and `traits` of a member (or of a simulation)."""
    tier = program.tier_for(totals.lifetime)
    current = tier["current"] or {}
    balance = {
        "available": totals.available,
        "lifetime": totals.lifetime,
        "earned": totals.earned,
        "adjusted": totals.credited - totals.debited,
        "redeemed": totals.redeemed,
        "expired": totals.expired,
        "expiring_soon": {"points": totals.expiring_soon, "within_days": EXPIRING_SOON_DAYS},
    }
    traits = {
        "loyalty_points": totals.available,
        "loyalty_lifetime_points": totals.lifetime,
        "loyalty_tier": current.get("name"),
        "loyalty_tier_id": current.get("id"),
        "loyalty_points_redeemed": totals.redeemed,
        "loyalty_points_expired": totals.expired,
        "loyalty_redemption_count": totals.redemptions,
        "loyalty_event_count": totals.events,
        "loyalty_first_activity_at": iso_z(totals.first_at) if totals.first_at else None,
        "loyalty_last_activity_at": iso_z(totals.last_at) if totals.last_at else None,
    }
    return {"balance": balance, "tier": tier, "traits": traits}


def contact_get(*, organization, contact_id: str, lock: bool = False) -> Contact | None:
    rows = Contact.objects.for_organization(organization)
    if lock:
        rows = rows.select_for_update()
    return rows.filter(pk=contact_id).first()


def member_totals(*, organization, program: Program, contact_id: str, now: datetime,
                  ) -> Totals:
    found = totals_for_contacts(organization_id=organization.pk, program=program,
                                contact_ids=[contact_id], now=now)
    return found.get(contact_id, Totals())


def member_payload(contact: Contact, program: Program, totals: Totals) -> dict[str, Any]:
    return {
        "contact_id": contact.pk,
        "contact": {"id": contact.pk, "first_name": contact.first_name,
                    "last_name": contact.last_name, "email": contact.email or None,
                    "phone": contact.phone or None},
        **state_payload(program, totals),
    }


def members_queryset(*, organization, program: Program) -> QuerySet:
    """Contacts with at least one event the program counts (earn rules, redemptions,
    adjustments); newest contact first. Served by the (organization, contact_id, name, ...)
    index of tracked events and the (organization, id) index of contacts."""
    activity = TrackedEvent.objects.for_organization(organization).filter(
        contact_id=OuterRef("pk"), name__in=program.relevant_event_names)
    return Contact.objects.for_organization(organization).filter(Exists(activity))
