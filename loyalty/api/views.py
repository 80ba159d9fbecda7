"""Loyalty endpoints (Document 3, 4.5): reads need `contacts:read`, writes `contacts:write`."""

from __future__ import annotations

from django.utils import timezone
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers as drf
from rest_framework import status
from rest_framework.response import Response

from loyalty import compute, selectors, services
from loyalty.program import Program
from platform_core.api.pagination import KeysetCursorPagination
from platform_core.api.views import PlatformAPIView
from platform_core.errors import APIError

from . import serializers as s

READ, WRITE = "contacts:read", "contacts:write"
PROGRAM_FIELDS = ("name", "earnRules", "tiers", "pointsExpiryDays")


class ProgramView(PlatformAPIView):
    required_scopes = {"GET": READ, "POST": WRITE, "PUT": WRITE, "DELETE": WRITE}

    @extend_schema(operation_id="loyalty_program_retrieve", responses=s.ProgramOutSerializer,
                   description="The active program; `program_source` is `default` until one "
                               "is authored (and again after a reset).")
    def get(self, request):
        program = selectors.program_get(organization=self.organization)
        return Response(selectors.program_payload(program))

    @extend_schema(operation_id="loyalty_program_create", request=s.ProgramSerializer,
                   responses={201: s.ProgramOutSerializer},
                   description="Create or replace the whole program; a new `revision_id`. "
                               "Balances are recomputed from the event history with it.")
    def post(self, request):
        body = s.ProgramSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        program = services.program_replace(organization=self.organization,
                                           config=body.to_config(),
                                           principal=self.principal, request=request)
        return Response(selectors.program_payload(program), status=status.HTTP_201_CREATED)

    @extend_schema(operation_id="loyalty_program_update", request=s.ProgramSerializer,
                   responses=s.ProgramOutSerializer,
                   description="Update: the given top-level fields (`name`, `earnRules`, "
                               "`tiers`, `pointsExpiryDays`) replace the active program's; "
                               "the others are kept. A new `revision_id`.")
    def put(self, request):
        if not isinstance(request.data, dict):
            raise drf.ValidationError("The body must be a JSON object.")
        current = selectors.program_get(organization=self.organization).config()
        merged = {**current, **{k: v for k, v in request.data.items() if k in PROGRAM_FIELDS}}
        body = s.ProgramSerializer(data=merged)
        body.is_valid(raise_exception=True)
        program = services.program_update(organization=self.organization,
                                          config=body.to_config(),
                                          principal=self.principal, request=request)
        return Response(selectors.program_payload(program))

    @extend_schema(operation_id="loyalty_program_reset", request=None,
                   responses={204: OpenApiResponse(description="Reset to the default.")},
                   description="Reset to the default program (a new revision). The points "
                               "history (tracked events, redemptions, adjustments) is kept.")
    def delete(self, request):
        services.program_reset(organization=self.organization, principal=self.principal,
                               request=request)
        return Response(status=status.HTTP_204_NO_CONTENT)


class PreviewView(PlatformAPIView):
    required_scopes = {"POST": READ}
    idempotent_posts = False  # a simulation: nothing is created

    @extend_schema(operation_id="loyalty_preview", request=s.PreviewSerializer,
                   responses=s.PreviewOutSerializer,
                   description="Simulate `events[]` (`event_name`, `properties`, optional "
                               "`occurred_at`, default now) under the active program or the "
                               "`program` override; nothing is written. Redemption and "
                               "adjustment events (`loyalty.points_redeemed`, "
                               "`loyalty.points_adjusted` with `properties.points`) debit "
                               "and credit as they do in a member's history.")
    def post(self, request):
        body = s.PreviewSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        now = timezone.now()
        if "program" in data:
            program = Program.from_config({"pointsExpiryDays": None, **data["program"]},
                                          source="override", revision_id="", id="override")
        else:
            program = selectors.program_get(organization=self.organization)
        events = [compute.SimEvent(name=e["event_name"], properties=e.get("properties") or {},
                                   occurred_at=e.get("occurred_at") or now)
                  for e in data["events"]]
        totals = compute.totals_for_simulation(program=program, events=events, now=now)
        points = compute.simulation_points(program=program, events=events)
        return Response({
            "state": selectors.state_payload(program, totals),
            "events": [{"index": i, "event_name": e.name, **p}
                       for i, (e, p) in enumerate(zip(events, points, strict=True))],
            "program": {"program_source": program.source,
                        "revision_id": program.revision_id or None},
        })


class MemberListView(PlatformAPIView):
    required_scopes = {"GET": READ}

    @extend_schema(operation_id="loyalty_members_list",
                   parameters=[
                       OpenApiParameter("limit", int, description="1-200, default 25."),
                       OpenApiParameter("cursor", str,
                                        description="Opaque cursor from meta.pagination.")],
                   responses=s.MemberOutSerializer(many=True),
                   description="Contacts with loyalty activity (at least one event an earn "
                               "rule counts, a redemption or an adjustment), newest contact "
                               "first, each with balance, tier and traits.")
    def get(self, request):
        program = selectors.program_get(organization=self.organization)
        paginator = KeysetCursorPagination()
        contacts = paginator.paginate_queryset(
            selectors.members_queryset(organization=self.organization, program=program),
            request)
        totals = compute.totals_for_contacts(
            organization_id=self.organization.pk, program=program,
            contact_ids=[c.pk for c in contacts], now=timezone.now())
        return paginator.get_paginated_response([
            selectors.member_payload(c, program, totals.get(c.pk, compute.Totals()))
            for c in contacts])


class MemberDetailView(PlatformAPIView):
    required_scopes = {"GET": READ}

    @extend_schema(
        operation_id="loyalty_members_retrieve", responses=s.MemberOutSerializer,
        description=(
            "Balance, tier and traits recomputed from the member's tracked events under the "
            "active program (a program change applies to the whole history). `balance`: "
            "`available` = `earned` + `adjusted` - `redeemed` - `expired`; `lifetime` "
            "(earned plus operator credits; never lowered by debits or expiry) picks the "
            "tier. With `pointsExpiryDays`, each credit lapses that many days after it was "
            "earned, in the part debits made before then did not consume (oldest first); "
            "`expiring_soon` is what will lapse within 30 days if nothing is redeemed."))
    def get(self, request, contact_id: str):
        contact = selectors.contact_get(organization=self.organization, contact_id=contact_id)
        if contact is None:
            raise APIError("NOT_FOUND")
        program = selectors.program_get(organization=self.organization)
        totals = selectors.member_totals(organization=self.organization, program=program,
                                         contact_id=contact.pk, now=timezone.now())
        return Response(selectors.member_payload(contact, program, totals))


def _movement(movement: services.Movement, points: int) -> dict:
    state = selectors.state_payload(movement.program, movement.totals)
    return {"id": movement.event.pk, "contact_id": movement.event.contact_id, "points": points,
            **{k: v for k, v in movement.event.properties.items() if k != "points"},
            "occurred_at": movement.event.occurred_at,
            "balance": state["balance"], "tier": state["tier"]}


class RedeemView(PlatformAPIView):
    required_scopes = {"POST": WRITE}

    @extend_schema(operation_id="loyalty_members_redeem", request=s.RedeemSerializer,
                   responses={201: s.MovementOutSerializer, 422: OpenApiResponse(
                       description="LOYALTY_INSUFFICIENT_POINTS or VALIDATION_ERROR")},
                   description="Debit `points` for `reward` (recorded as a "
                               "`loyalty.points_redeemed` event of the member). Refused with "
                               "422 LOYALTY_INSUFFICIENT_POINTS beyond the available balance; "
                               "concurrent redemptions never overdraw.")
    def post(self, request, contact_id: str):
        body = s.RedeemSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        movement = services.points_redeem(
            organization=self.organization, contact_id=contact_id, points=data["points"],
            reward=data["reward"], reference=data.get("reference") or None,
            principal=self.principal)
        return Response(_movement(movement, -data["points"]), status=status.HTTP_201_CREATED)


class AdjustView(PlatformAPIView):
    required_scopes = {"POST": WRITE}

    @extend_schema(operation_id="loyalty_members_adjust", request=s.AdjustSerializer,
                   responses={201: s.MovementOutSerializer, 422: OpenApiResponse(
                       description="LOYALTY_INSUFFICIENT_POINTS or VALIDATION_ERROR")},
                   description="Operator credit (`points` > 0) or debit (`points` < 0) with a "
                               "`reason`; audit-logged and recorded as a "
                               "`loyalty.points_adjusted` event. A debit never takes the "
                               "balance below zero.")
    def post(self, request, contact_id: str):
        body = s.AdjustSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        movement = services.points_adjust(
            organization=self.organization, contact_id=contact_id, points=data["points"],
            reason=data["reason"], principal=self.principal, request=request)
        return Response(_movement(movement, data["points"]), status=status.HTTP_201_CREATED)
