"""Co-browse (Document 3, 4.7; 0-conventions.md 7) and routing-agent profiles."""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import mixins, status
from rest_framework.response import Response

from conversations import agents, cobrowse
from conversations.routing_models import RoutingAgent
from platform_core.api.views import PlatformAPIView, TenantViewSet

from . import serializers as s

READ, WRITE = "conversations:read", "conversations:write"
AGENT_ROLES = cobrowse.AGENT_ROLES


class CobrowseSessionView(PlatformAPIView):
    required_scopes = {"GET": READ}

    @extend_schema(responses=OpenApiTypes.OBJECT,
                   description="`data.cobrowse` is the conversation's latest session or "
                               "null. Malformed id: 422; not in the account: 404.")
    def get(self, request, conversation_id: str):
        conversation = cobrowse.conversation_in_account(self.principal, conversation_id)
        return Response({"cobrowse": cobrowse.session_data(
            cobrowse.latest_session(conversation))})


class CobrowseJoinView(PlatformAPIView):
    required_scopes = {"POST": WRITE}
    required_roles = {"POST": AGENT_ROLES}

    @extend_schema(request=s.CobrowseJoinSerializer, responses=OpenApiTypes.OBJECT,
                   description="Agent join: control is the AND of `control` and the "
                               "visitor's consent. 404 COBROWSE_NOT_ACTIVE without a "
                               "joinable session; 503 COBROWSE_UNAVAILABLE.")
    def post(self, request, conversation_id: str):
        body = s.CobrowseJoinSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        session, grant = cobrowse.agent_join(principal=self.principal,
                                             conversation_id=conversation_id,
                                             control=body.validated_data["control"],
                                             request=request)
        return Response({**grant, "cobrowse": cobrowse.session_data(session)})


class CobrowseEndView(PlatformAPIView):
    required_scopes = {"POST": WRITE}
    required_roles = {"POST": AGENT_ROLES}

    @extend_schema(request=None, responses=OpenApiTypes.OBJECT,
                   description="Idempotent; `ended_by` is `agent`.")
    def post(self, request, conversation_id: str):
        session = cobrowse.session_end(principal=self.principal,
                                       conversation_id=conversation_id)
        return Response({"cobrowse": cobrowse.session_data(session)})


class WidgetCobrowseView(PlatformAPIView):
    """The visitor's widget (a public key) asks for co-browse on its conversation."""

    required_scopes = {"POST": None}

    @extend_schema(request=s.WidgetCobrowseSerializer, responses=OpenApiTypes.OBJECT,
                   description="Starts (201) or returns (200) the conversation's live "
                               "session, with the visitor's relay token.")
    def post(self, request):
        body = s.WidgetCobrowseSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        session, grant, created = cobrowse.widget_start(principal=self.principal,
                                                        request=request, **body.validated_data)
        return Response({**grant, "cobrowse": cobrowse.session_data(session)},
                        status=status.HTTP_201_CREATED if created else status.HTTP_200_OK)


class RoutingAgentViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, TenantViewSet):
    """Members who take conversations: skills, capacity, availability, current load.
    `{id}` is the member's user id (`usr_`)."""

    model = RoutingAgent
    serializer_class = s.RoutingAgentSerializer
    required_scopes = {"GET": READ, "PUT": WRITE}
    lookup_field = "user_id"

    @extend_schema(request=s.RoutingAgentWriteSerializer,
                   responses={200: s.RoutingAgentSerializer, 201: s.RoutingAgentSerializer})
    def update(self, request, user_id=None):
        body = s.RoutingAgentWriteSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        agent, created = agents.routing_agent_put(principal=self.principal, user_id=user_id,
                                                  **{k: body.validated_data.get(k) for k in
                                                     ("skills", "capacity", "availability")})
        return Response(s.RoutingAgentSerializer(agent).data,
                        status=status.HTTP_201_CREATED if created else status.HTTP_200_OK)
