"""Views of /api/v1/agents (Document 3, 4.1). Thin: bodies validated here, writes in
`agents.agent_services`. Reads are open to every role; writes need owner, admin or
developer."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import mixins, status
from rest_framework.response import Response

from platform_core.api.pagination import KeysetCursorPagination
from platform_core.api.serialization import validated_input
from platform_core.api.views import TenantViewSet

from .. import agent_services as services
from ..agent_models import Agent
from . import serializers as s


class NewestFirst(KeysetCursorPagination):
    ordering = ("-created_at", "-id")  # the (organization[, status], created_at) indexes


WRITERS = {"owner", "admin", "developer"}
WRITE = "agents:write"


class AgentViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, TenantViewSet):
    model = Agent
    serializer_class = s.AgentSerializer
    required_scopes = {"GET": None, "POST": WRITE, "PATCH": WRITE, "DELETE": WRITE}
    required_roles = {"POST": WRITERS, "PATCH": WRITERS, "DELETE": WRITERS}

    pagination_class = NewestFirst

    def scope_queryset(self, queryset):
        if self.action == "list":
            query = validated_input(s.AgentListQuerySerializer,
                                    self.request.query_params).validated_data
            if query.get("status"):
                queryset = queryset.filter(status=query["status"])
        return queryset

    def _answer(self, agent: Agent, code: int = status.HTTP_200_OK) -> Response:
        return Response(s.AgentSerializer(agent).data, status=code)

    @extend_schema(parameters=[OpenApiParameter("status", str, enum=["draft", "active"])])
    def list(self, request, *args, **kwargs):
        return super().list(request, *args, **kwargs)

    @extend_schema(request=s.AgentInSerializer, responses={201: s.AgentSerializer},
                   description="A new agent, `status: draft`, no channel bound.")
    def create(self, request):
        body = validated_input(s.AgentInSerializer, request.data).validated_data
        body = {**body, "safety_config": {"pii_redaction": False, "content_filter": False,
                                          **dict(body.get("safety_config") or {})}}
        agent = services.agent_create(principal=self.principal, body=body, request=request)
        return self._answer(agent, status.HTTP_201_CREATED)

    @extend_schema(request=s.AgentUpdateSerializer, responses=s.AgentSerializer,
                   description="Only the sent fields change; `version` rises and the "
                               "replaced configuration is kept.")
    def partial_update(self, request, pk=None):
        serializer = s.AgentUpdateSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        body = dict(serializer.validated_data)
        if "safety_config" in body:
            current = self.get_object().safety_config
            body["safety_config"] = {**current, **dict(body["safety_config"])}
        agent = services.agent_update(principal=self.principal, agent_id=pk, body=body,
                                      request=request)
        return self._answer(agent)

    @extend_schema(request=s.DeploySerializer, responses=s.AgentSerializer,
                   description="Bind the agent to a channel: `status: active`, "
                               "`config.deployment` {channel, phone_number, deployed_at}.")
    def deploy(self, request, pk=None):
        self.get_object()  # 404 before the body is judged
        body = validated_input(s.DeploySerializer, request.data).validated_data
        agent = services.agent_deploy(principal=self.principal, agent_id=pk, body=dict(body),
                                      request=request)
        return self._answer(agent)

    @extend_schema(request=None, responses=s.AgentSerializer,
                   description="Drop the channel binding: `status: draft`.")
    def undeploy(self, request, pk=None):
        return self._answer(services.agent_undeploy(principal=self.principal, agent_id=pk,
                                                    request=request))

    @extend_schema(responses={204: None},
                   description="Deletes the agent; its conversations and their messages "
                               "stay.")
    def destroy(self, request, pk=None):
        services.agent_delete(principal=self.principal, agent_id=pk, request=request)
        return Response(status=status.HTTP_204_NO_CONTENT)
