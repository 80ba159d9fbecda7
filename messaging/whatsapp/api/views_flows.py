"""Flow endpoints and the flow send (Document 2, 4.5), base `/api/v1/whatsapp`."""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status
from rest_framework.response import Response

from platform_core.api.serialization import represent, validated_input
from platform_core.api.views import PlatformAPIView

from .. import selectors
from ..services import flows, sends
from . import serializers as s
from .common import ADMINS, READ, SEND, WRITE, get_or_404, paginated, sent


class FlowListView(PlatformAPIView):
    required_scopes = {"GET": READ, "POST": WRITE}
    required_roles = {"GET": ADMINS, "POST": ADMINS}

    @extend_schema(responses=s.WhatsAppFlowSerializer(many=True), description="Flows (owner/admin).")
    def get(self, request):
        return paginated(self, selectors.flows(self.organization), s.WhatsAppFlowSerializer)

    @extend_schema(request=s.WhatsAppFlowCreateSerializer, responses={201: s.WhatsAppFlowSerializer},
                   description="Create a draft flow (owner/admin). `categories` from "
                               "APPOINTMENT_BOOKING, LEAD_GENERATION, CONTACT_US, "
                               "CUSTOMER_SUPPORT, SURVEY, OTHER.")
    def post(self, request):
        body = validated_input(s.WhatsAppFlowCreateSerializer, request.data).validated_data
        flow = flows.flow_create(organization=self.organization, principal=self.principal,
                                 name=body["name"], categories=body["categories"])
        return Response(represent(s.WhatsAppFlowDetailSerializer, flow), status=status.HTTP_201_CREATED)

class FlowDetailView(PlatformAPIView):
    required_scopes = {"GET": READ, "DELETE": WRITE}
    required_roles = {"DELETE": ADMINS}

    @extend_schema(responses=s.WhatsAppFlowDetailSerializer, description="A flow with its JSON.")
    def get(self, request, flow_id: str):
        flow = get_or_404(selectors.flows(self.organization), flow_id)
        return Response(represent(s.WhatsAppFlowDetailSerializer, flow))

    @extend_schema(responses={204: None},
                   description="Delete a draft; a published flow: 409 WHATSAPP_FLOW_NOT_DRAFT.")
    def delete(self, request, flow_id: str):
        flow = get_or_404(selectors.flows(self.organization), flow_id)
        flows.flow_delete(organization=self.organization, principal=self.principal, flow=flow)
        return Response(status=status.HTTP_204_NO_CONTENT)

class FlowAssetsView(PlatformAPIView):
    required_scopes = {"POST": WRITE}
    required_roles = {"POST": ADMINS}

    @extend_schema(request=s.WhatsAppFlowAssetsSerializer, responses=s.WhatsAppFlowDetailSerializer,
                   description="Upload the flow JSON of a draft (validated: 422 naming the "
                               "path; a published flow: 409 WHATSAPP_FLOW_NOT_DRAFT).")
    def post(self, request, flow_id: str):
        flow = get_or_404(selectors.flows(self.organization), flow_id)
        body = validated_input(s.WhatsAppFlowAssetsSerializer, request.data).validated_data
        flow = flows.flow_assets(organization=self.organization, principal=self.principal,
                                 flow=flow, definition=body["flow_json"])
        return Response(represent(s.WhatsAppFlowDetailSerializer, flow))

class FlowPublishView(PlatformAPIView):
    required_scopes = {"POST": WRITE}
    required_roles = {"POST": ADMINS}

    @extend_schema(request=None, responses=s.WhatsAppFlowDetailSerializer,
                   description="Publish (irreversible). Without assets: 409 "
                               "WHATSAPP_FLOW_NO_ASSETS; already published: 409 "
                               "WHATSAPP_FLOW_NOT_DRAFT.")
    def post(self, request, flow_id: str):
        flow = get_or_404(selectors.flows(self.organization), flow_id)
        flow = flows.flow_publish(organization=self.organization, principal=self.principal,
                                  flow=flow)
        return Response(represent(s.WhatsAppFlowDetailSerializer, flow))

class FlowFunnelView(PlatformAPIView):
    required_scopes = {"GET": READ}

    @extend_schema(parameters=[OpenApiParameter("since", OpenApiTypes.DATETIME),
                               OpenApiParameter("until", OpenApiTypes.DATETIME)],
                   responses=OpenApiTypes.OBJECT,
                   description="Per-step counts and drop-off (sent, each screen, completed) "
                               "from the recorded sends and submissions; default the "
                               "trailing 30 days.")
    def get(self, request, flow_id: str):
        flow = get_or_404(selectors.flows(self.organization), flow_id)
        since, until = selectors.funnel_window(request.query_params)
        return Response(selectors.flow_funnel(flow, since=since, until=until))

class FlowSendView(PlatformAPIView):
    required_scopes = {"POST": SEND}

    @extend_schema(request=s.WhatsAppFlowSendSerializer, responses={202: s.WhatsAppFlowSentSerializer},
                   description="Send a published flow (else 422 WHATSAPP_FLOW_NOT_PUBLISHED) "
                               "with a button labelled `flow_cta`. `flow_token` (generated when "
                               "absent) is echoed by the submission, which arrives as "
                               "`interactive.nfm_reply` and is recorded for the funnel. Only "
                               "inside the 24-hour window.")
    def post(self, request):
        body = dict(validated_input(s.WhatsAppFlowSendSerializer, request.data).validated_data)

        flow_id = body.pop("flow_id")
        flow = selectors.flows(self.organization).filter(pk=flow_id[:40]).first()
        if flow is None:
            from platform_core.errors import validation_error

            raise validation_error("flow_id", "No flow of this organization has this id.")
        message, token = sends.send_flow(organization=self.organization,
                                         principal=self.principal, flow=flow, **body)
        return Response({**sent(message), "flow_id": flow.pk, "flow_token": token},
                        status=status.HTTP_202_ACCEPTED)
