"""Writes: the program (create/replace, update, reset) and member debits and credits.

Redemptions and adjustments are stored as tracked events of the member (the same table
`POST /events/track` writes), never in a ledger of their own. A debit first locks the
contact row, then recomputes the balance: concurrent debits of one member queue on that
lock, and each sees the debits committed before it, so none overdraws.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.utils import timezone

from platform_core.audit.services import audit_record
from platform_core.errors import APIError
from platform_core.events.bus import emit
from platform_core.events.models import TrackedEvent
from platform_core.identity.principal import Principal
from platform_core.ids import new_id

from . import selectors
from .compute import Totals
from .models import LoyaltyProgram, ProgramSource
from .program import ADJUSTMENT_EVENT, REDEMPTION_EVENT, Program


def _save(*, organization, config: dict[str, Any], source: str, action: str,
          principal: Principal | None, request) -> Program:
    rows = LoyaltyProgram.objects.for_organization(organization)
    row = rows.select_for_update().first() or LoyaltyProgram(organization=organization)
    row.source = source
    row.name = config["name"]
    row.earn_rules = config["earnRules"]
    row.tiers = config["tiers"]
    row.points_expiry_days = config.get("pointsExpiryDays")
    row.revision_id = new_id("rev")
    row.save()
    audit_record(action=action, organization=organization, principal=principal, target=row,
                 request=request, metadata={"revision_id": row.revision_id})
    emit(organization=organization, type="loyalty.program.updated",
         data={"program_source": source, "revision_id": row.revision_id})
    return selectors.program_from_row(row)


@transaction.atomic
def program_replace(*, organization, config: dict[str, Any], principal: Principal | None = None,
                    request=None) -> Program:
    """Create or replace the whole program (a new revision)."""
    return _save(organization=organization, config=config, source=ProgramSource.CUSTOM,
                 action="loyalty.program.replaced", principal=principal, request=request)


@transaction.atomic
def program_update(*, organization, config: dict[str, Any], principal: Principal | None = None,
                   request=None) -> Program:
    """Store `config`, the active program merged with the given top-level fields (the
    view merges, then validates the whole); the result is a custom program."""
    return _save(organization=organization, config=config, source=ProgramSource.CUSTOM,
                 action="loyalty.program.updated", principal=principal, request=request)


@transaction.atomic
def program_reset(*, organization, principal: Principal | None = None, request=None) -> Program:
    """Back to the default program; the tracked events (the points history) stay."""
    return _save(organization=organization, config=Program.default().config(),
                 source=ProgramSource.DEFAULT, action="loyalty.program.reset",
                 principal=principal, request=request)


@dataclass(frozen=True)
class Movement:
    event: TrackedEvent
    program: Program
    totals: Totals


def _debit_check(totals: Totals, points: int) -> None:
    if points > totals.available:
        raise APIError("LOYALTY_INSUFFICIENT_POINTS",
                       details={"available": totals.available, "requested": points})


def _record(*, organization, contact, name: str, properties: dict[str, Any], now) -> TrackedEvent:
    return TrackedEvent.objects.for_organization(organization).create(
        organization=organization, name=name, properties=properties,
        contact_id=contact.pk, contact_email=contact.email, contact_phone=contact.phone,
        occurred_at=now)


def _locked_member(organization, contact_id: str):
    contact = selectors.contact_get(organization=organization, contact_id=contact_id, lock=True)
    if contact is None:
        raise APIError("NOT_FOUND")
    return contact


@transaction.atomic
def points_redeem(*, organization, contact_id: str, points: int, reward: str,
                  reference: str | None = None, principal: Principal | None = None,
                  ) -> Movement:
    """Debit `points` for `reward`; 422 LOYALTY_INSUFFICIENT_POINTS beyond the balance."""
    contact = _locked_member(organization, contact_id)
    now = timezone.now()  # taken under the lock: later than every debit committed before
    program = selectors.program_get(organization=organization)
    totals = selectors.member_totals(organization=organization, program=program,
                                     contact_id=contact.pk, now=now)
    _debit_check(totals, points)
    event = _record(organization=organization, contact=contact, name=REDEMPTION_EVENT,
                    properties={"points": points, "reward": reward, "reference": reference},
                    now=now)
    after = selectors.member_totals(organization=organization, program=program,
                                    contact_id=contact.pk, now=now)
    emit(organization=organization, type="loyalty.points.redeemed", data={
        "contact_id": contact.pk, "event_id": event.pk, "points": points, "reward": reward,
        "reference": reference, "available": after.available})
    return Movement(event=event, program=program, totals=after)


@transaction.atomic
def points_adjust(*, organization, contact_id: str, points: int, reason: str,
                  principal: Principal | None = None, request=None) -> Movement:
    """Operator credit (points > 0) or debit (points < 0), audit-logged. A debit never
    takes the balance below zero (422 LOYALTY_INSUFFICIENT_POINTS)."""
    contact = _locked_member(organization, contact_id)
    now = timezone.now()
    program = selectors.program_get(organization=organization)
    if points < 0:
        totals = selectors.member_totals(organization=organization, program=program,
                                         contact_id=contact.pk, now=now)
        _debit_check(totals, -points)
    actor = principal.actor_id if principal is not None else ""
    event = _record(organization=organization, contact=contact, name=ADJUSTMENT_EVENT,
                    properties={"points": points, "reason": reason, "actor_id": actor},
                    now=now)
    after = selectors.member_totals(organization=organization, program=program,
                                    contact_id=contact.pk, now=now)
    audit_record(action="loyalty.points.adjusted", organization=organization,
                 principal=principal, target=contact, request=request,
                 metadata={"points": points, "reason": reason, "event_id": event.pk,
                           "available": after.available})
    emit(organization=organization, type="loyalty.points.adjusted", data={
        "contact_id": contact.pk, "event_id": event.pk, "points": points, "reason": reason,
        "available": after.available})
    return Movement(event=event, program=program, totals=after)
