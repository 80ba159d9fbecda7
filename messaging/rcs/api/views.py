"""RCS endpoints (Document 2, 4.6), base `/api/v1/rcs`. Scopes `rcs:read` / `rcs:write`.

Test mode answers through the sandbox double (`messaging/rcs/providers/sandbox.py`); live
mode through Google with the organization's `rcs` provider account (none: 503
PROVIDER_NOT_WIRED).
"""

from __future__ import annotations

from django.http import Http404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import mixins, serializers, status
from rest_framework.response import Response

from messaging.api.serializers import MessageSerializer
from messaging.rcs import capability, commerce, selectors, services
from messaging.rcs.models import RcsAgent, RcsBrand, RcsTemplate, RcsTestDevice
from messaging.rcs.phones import e164
from platform_core.api.serialization import represent, validated_input
from platform_core.api.views import PlatformAPIView, TenantViewSet
from platform_core.errors import APIError

from . import serializers as s

READ, WRITE = "rcs:read", "rcs:write"
CATALOG_MAX = 1000  # products listed in one answer; `count` is the catalog's size
SCOPES = {"GET": READ, "POST": WRITE, "PUT": WRITE, "PATCH": WRITE, "DELETE": WRITE}

_DECISIONS = ("Test mode: the sandbox double decides right after the request (see "
              "docs/rcs.md); live mode: Google.")


class BrandViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, TenantViewSet):
    """RCS brands: create, list, read, update, delete, submit for carrier verification."""

    model = RcsBrand
    serializer_class = s.RcsBrandSerializer
    required_scopes = SCOPES

    @extend_schema(request=s.RcsBrandInputSerializer, responses={201: s.RcsBrandSerializer})
    def create(self, request):
        body = validated_input(s.RcsBrandInputSerializer, request.data)
        brand = services.brand_create(organization=self.organization, principal=self.principal,
                                      **body.validated_data)
        return Response(represent(s.RcsBrandSerializer, brand), status=status.HTTP_201_CREATED)

    @extend_schema(request=s.RcsBrandPatchSerializer, responses=s.RcsBrandSerializer,
                   description="Update a brand (not while `submitted`: 409 CONFLICT). "
                               "Renaming a verified brand sends it back to `draft`.")
    def partial_update(self, request, pk=None):
        body = validated_input(s.RcsBrandPatchSerializer, request.data)
        brand = services.brand_update(brand=self.get_object(), principal=self.principal,
                                      **body.validated_data)
        return Response(represent(s.RcsBrandSerializer, brand))

    @extend_schema(responses={204: None},
                   description="Delete a brand without agents (else 409 RCS_BRAND_IN_USE).")
    def destroy(self, request, pk=None):
        services.brand_delete(brand=self.get_object(), principal=self.principal)
        return Response(status=status.HTTP_204_NO_CONTENT)

    @extend_schema(request=None, responses=s.RcsBrandSerializer,
                   description="Submit a draft or rejected brand for carrier verification: "
                               "`submitted`, then `verified` or `rejected` (events "
                               "rcs.brand.submitted / .verified / .rejected). " + _DECISIONS)
    def submit(self, request, pk=None):
        brand = services.brand_submit(brand=self.get_object(), principal=self.principal)
        return Response(represent(s.RcsBrandSerializer, brand))


def _agent_lookup(view, pk) -> RcsAgent:
    agent = (RcsAgent.objects.for_organization(view.organization).select_related("brand")
             .filter(pk=pk).first())
    if agent is None:
        raise APIError("NOT_FOUND", "No such RCS agent in this account.")
    return agent


class AgentViewSet(mixins.RetrieveModelMixin, TenantViewSet):
    """RCS agents (`/bots`) and their test devices, testers, templates and quality."""

    model = RcsAgent
    serializer_class = s.RcsAgentSerializer
    required_scopes = SCOPES

    def scope_queryset(self, queryset):
        return queryset.select_related("brand")

    def get_object(self):
        if "pk" not in self.kwargs:
            # `PUT /bots` names its agent in the body; DRF's OPTIONS metadata probes PUT
            # with get_object() and skips a 404.
            raise Http404
        return super().get_object()

    def list(self, request):
        page = self.paginate_queryset(self.get_queryset())
        return self.get_paginated_response(represent(s.RcsAgentSerializer, page, many=True))

    @extend_schema(request=s.RcsAgentCreateSerializer, responses={201: s.RcsAgentSerializer})
    def create(self, request):
        body = validated_input(s.RcsAgentCreateSerializer, request.data)
        agent = services.agent_create(organization=self.organization, principal=self.principal,
                                      **body.validated_data)
        return Response(represent(s.RcsAgentSerializer, agent), status=status.HTTP_201_CREATED)

    @extend_schema(request=s.RcsAgentProfileSerializer, responses=s.RcsAgentSerializer,
                   description="Update the profile of the agent named by `id` (or `bot_id`) "
                               "in the body; omitted fields are kept.")
    def update_profile(self, request):
        body = validated_input(s.RcsAgentProfileSerializer, request.data)
        data = dict(body.validated_data)
        pk = data.pop("id", None) or data.pop("bot_id", None)
        data.pop("bot_id", None)
        agent = services.agent_update(agent=_agent_lookup(self, pk), principal=self.principal,
                                      **data)
        return Response(represent(s.RcsAgentSerializer, agent))

    @extend_schema(responses={204: None})
    def destroy(self, request, pk=None):
        services.agent_delete(agent=self.get_object(), principal=self.principal)
        return Response(status=status.HTTP_204_NO_CONTENT)

    @extend_schema(request=None, responses=s.RcsAgentSerializer,
                   description="Submit the agent for verification and launch on its "
                               "`carriers`: `verification_status` `pending`, then `verified` "
                               "(launched carriers in `carrier_statuses`) or `rejected`. The "
                               "brand must be submitted or verified (else 409 "
                               "RCS_AGENT_NOT_VERIFIABLE). " + _DECISIONS)
    def verify(self, request, pk=None):
        agent = services.agent_verify(agent=self.get_object(), principal=self.principal)
        return Response(represent(s.RcsAgentSerializer, agent))

    @extend_schema(responses=s.RcsQualitySerializer,
                   description="Agent quality (Document 2, 2.8). Live mode reads the "
                               "verification and launch states from Google first. 404 when the "
                               "agent is not in the account.")
    def quality(self, request, pk=None):
        agent = self.get_object()
        if not agent.organization.sandbox:
            agent = services.agent_refresh(organization=self.organization, agent_id=agent.pk)
        return Response(selectors.quality(agent))

    # --- test devices ---------------------------------------------------------------------
    @extend_schema(responses=s.RcsDeviceSerializer(many=True))
    def devices(self, request, pk=None):
        agent = self.get_object()
        page = self.paginate_queryset(RcsTestDevice.objects.filter(agent=agent))
        return self.get_paginated_response(represent(s.RcsDeviceSerializer, page, many=True))

    @extend_schema(request=s.RcsPhoneSerializer, responses={201: s.RcsDeviceSerializer,
                                                         200: s.RcsDeviceSerializer},
                   description="Add a test device: the phone is invited as a tester (201; an "
                               "existing device is invited again, 200). Test mode: "
                               "+15005550011 is not RCS-capable (422 RCS_NOT_CAPABLE).")
    def device_add(self, request, pk=None):
        body = validated_input(s.RcsPhoneSerializer, request.data)
        device, created = services.device_add(agent=self.get_object(), principal=self.principal,
                                              phone=body.validated_data["phone"])
        return Response(represent(s.RcsDeviceSerializer, device),
                        status=status.HTTP_201_CREATED if created else status.HTTP_200_OK)

    @extend_schema(request=s.RcsPhoneSerializer, responses={204: None},
                   parameters=[OpenApiParameter("phone", OpenApiTypes.STR,
                                                description="The device (or `phone` in the "
                                                            "body).")],
                   description="Remove a test device (404 when the phone is not one).")
    def device_remove(self, request, pk=None):
        agent = self.get_object()
        raw = request.query_params.get("phone") or (
            request.data.get("phone") if isinstance(request.data, dict) else None)
        body = validated_input(s.RcsPhoneSerializer, {"phone": raw})
        services.device_remove(agent=agent, principal=self.principal,
                               phone=body.validated_data["phone"])
        return Response(status=status.HTTP_204_NO_CONTENT)

    @extend_schema(request=s.RcsPhoneSerializer, responses=s.RcsDeviceSerializer,
                   description="Invite an E.164 phone as a tester of the agent (kept as a test "
                               "device).")
    def tester_invite(self, request, pk=None):
        body = validated_input(s.RcsPhoneSerializer, request.data)
        device, _ = services.device_add(agent=self.get_object(), principal=self.principal,
                                        phone=body.validated_data["phone"])
        return Response(represent(s.RcsDeviceSerializer, device))

    # --- templates ------------------------------------------------------------------------
    @extend_schema(responses=s.RcsTemplateSerializer(many=True))
    def templates(self, request, pk=None):
        agent = self.get_object()
        page = self.paginate_queryset(RcsTemplate.objects.filter(agent=agent))
        return self.get_paginated_response(represent(s.RcsTemplateSerializer, page, many=True))

    @extend_schema(request=s.RcsTemplateCreateSerializer, responses={201: s.RcsTemplateSerializer},
                   description="Create a template (`pending`, then `approved` or `rejected`; "
                               "events rcs.template.*); names are unique per agent (409 "
                               "ALREADY_EXISTS). " + _DECISIONS)
    def template_create(self, request, pk=None):
        agent = self.get_object()
        body = validated_input(s.RcsTemplateCreateSerializer, request.data)
        template = services.template_create(agent=agent, principal=self.principal,
                                            **body.validated_data)
        return Response(represent(s.RcsTemplateSerializer, template),
                        status=status.HTTP_201_CREATED)

    def _template(self, name: str) -> RcsTemplate:
        template = RcsTemplate.objects.filter(agent=self.get_object(), name=name).first()
        if template is None:
            raise APIError("NOT_FOUND", "No template with this name on the agent.")
        return template

    @extend_schema(responses=s.RcsTemplateSerializer)
    def template_read(self, request, pk=None, name=None):
        return Response(represent(s.RcsTemplateSerializer, self._template(name)))

    @extend_schema(request=s.RcsTemplateContentSerializer, responses=s.RcsTemplateSerializer,
                   description="Replace the template's content (back to `pending`).")
    def template_replace(self, request, pk=None, name=None):
        template = self._template(name)
        body = validated_input(s.RcsTemplateContentSerializer, request.data)
        template = services.template_replace(template=template, principal=self.principal,
                                             **body.validated_data)
        return Response(represent(s.RcsTemplateSerializer, template))

    @extend_schema(responses={204: None})
    def template_delete(self, request, pk=None, name=None):
        services.template_delete(template=self._template(name), principal=self.principal)
        return Response(status=status.HTTP_204_NO_CONTENT)


class CapabilityView(PlatformAPIView):
    required_scopes = {"GET": READ}

    @extend_schema(responses=s.RcsCapabilitySerializer,
                   description="Probe whether an E.164 phone can receive RCS from the agent "
                               "(cached 5 minutes: `cached`). Test mode: every number but "
                               "+15005550011 is capable.")
    def get(self, request, bot_id: str, phone: str):
        agent = _agent_lookup(self, bot_id)
        return Response(capability.capability(agent=agent, phone=e164(phone)))


class ReachScanView(PlatformAPIView):
    required_scopes = {"POST": WRITE}

    @extend_schema(request=s.RcsReachScanInputSerializer, responses=inline_serializer(
        "RcsReachScan", {"segment_id": serializers.CharField(),
                         "bot_id": serializers.CharField(),
                         "members": serializers.IntegerField(),
                         "with_phone": serializers.IntegerField(),
                         "scanned": serializers.IntegerField(),
                         "sampled": serializers.BooleanField(),
                         "from_cache": serializers.IntegerField(),
                         "probed": serializers.IntegerField(),
                         "by_status": serializers.DictField(child=serializers.IntegerField()),
                         "estimated_reach": serializers.IntegerField(),
                         "reach_rate": serializers.FloatField()}),
        description="Estimate a segment's RCS reach for an agent without sending: members "
                    "with a phone, capability from the cache or probed in bulk, counts by "
                    "status. At most 10,000 phones are scanned (`sampled` beyond: the estimate "
                    "scales the scanned rate).")
    def post(self, request):
        body = validated_input(s.RcsReachScanInputSerializer, request.data)
        agent = _agent_lookup(self, body.validated_data["bot_id"])
        return Response(capability.reach_scan(organization=self.organization, agent=agent,
                                              segment_id=body.validated_data["segment_id"]))


_TEMPLATE_ROW = {"template_name": serializers.CharField(),
                 "messages": serializers.IntegerField(), "sent": serializers.IntegerField(),
                 "delivered": serializers.IntegerField(), "read": serializers.IntegerField(),
                 "failed": serializers.IntegerField()}
_DAYS = OpenApiParameter("days", OpenApiTypes.INT, description="Window, 1-90 days (default "
                                                               "30).")


class TemplateAnalyticsView(PlatformAPIView):
    required_scopes = {"GET": READ}

    @extend_schema(parameters=[_DAYS], responses=inline_serializer("RcsTemplateAnalytics", {
        "days": serializers.IntegerField(),
        "templates": inline_serializer("RcsTemplateRow", _TEMPLATE_ROW, many=True)}),
        description="One row per template of the outbound RCS messages in the window, by "
                    "volume; messages without a template are one `(no template)` row.")
    def get(self, request):
        days = validated_input(s.RcsAnalyticsQuerySerializer, request.query_params.dict()) \
            .validated_data["days"]
        return Response({"days": days, "templates": selectors.template_analytics(
            self.organization, days=days)})


class DailyAnalyticsView(PlatformAPIView):
    required_scopes = {"GET": READ}

    @extend_schema(parameters=[_DAYS], responses=inline_serializer("RcsDailyAnalytics", {
        "days": serializers.IntegerField(),
        "daily": inline_serializer("RcsDailyRow", {
            "date": serializers.DateField(), "messages": serializers.IntegerField(),
            "sent": serializers.IntegerField(), "delivered": serializers.IntegerField(),
            "read": serializers.IntegerField(), "failed": serializers.IntegerField()},
            many=True)}),
        description="Sent, delivered and read outbound RCS messages per UTC day of the "
                    "window (days without messages omitted).")
    def get(self, request):
        days = validated_input(s.RcsAnalyticsQuerySerializer, request.query_params.dict()) \
            .validated_data["days"]
        return Response({"days": days,
                         "daily": selectors.daily_analytics(self.organization, days=days)})


class CatalogView(PlatformAPIView):
    required_scopes = {"GET": READ}

    @extend_schema(responses=inline_serializer("RcsCatalog", {
        "products": s.RcsProductSerializer(many=True), "count": serializers.IntegerField()}),
        description="Products of the connected catalog; none: `products: []`, `count: 0`.")
    def get(self, request):
        rows = selectors.catalog(self.organization)
        products = list(rows[:CATALOG_MAX])
        count = len(products) if len(products) < CATALOG_MAX else rows.count()
        return Response({"products": represent(s.RcsProductSerializer, products, many=True),
                         "count": count})


class SendCatalogView(PlatformAPIView):
    required_scopes = {"POST": WRITE}

    @extend_schema(request=s.RcsSendCatalogSerializer, responses={202: MessageSerializer},
                   description="Send catalog products as an RCS carousel: 202 with the queued "
                               "message. 2-10 cards (fewer: 422 RCS_CAROUSEL_TOO_SMALL; more "
                               "than 10 are cut to the first 10, `truncated`); unknown SKUs "
                               "422. Taps arrive as inbound RCS messages.")
    def post(self, request):
        body = validated_input(s.RcsSendCatalogSerializer, request.data)
        message, cards, truncated = commerce.send_catalog(
            organization=self.organization, principal=self.principal, **body.validated_data)
        data = represent(MessageSerializer, message)
        return Response({**data, "cards": cards, "truncated": truncated},
                        status=status.HTTP_202_ACCEPTED)
