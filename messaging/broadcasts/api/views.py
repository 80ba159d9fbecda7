"""Broadcasts (campaigns): `/api/v1/broadcasts` (issue 7)."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import mixins, status
from rest_framework.decorators import action
from rest_framework.response import Response

from messaging.broadcasts import services
from messaging.broadcasts.models import Broadcast
from platform_core.api.serialization import represent
from platform_core.api.views import TenantViewSet

from . import serializers as s

READ, WRITE = "messages:read", "messages:write"

_CREATE_DESCRIPTION = (
    "Send one message to every contact of a list or a saved segment as one campaign: 202 "
    "with the broadcast, `queued` (it starts at once) or `scheduled` (with `send_at`). "
    "Content: `template_name` + `language` + `variables` (values may name contact fields, "
    '`{"1": "{{contact.first_name | there}}"}`) or `body`. Sender: `messaging_service_id` '
    "(its sticky pool) or `from`, else the default sender. The audience is snapshotted when "
    "the broadcast starts; sends are throttled per sender address (`rate_per_second`). "
    "Opted-out recipients are skipped and counted. Every message carries the broadcast's "
    "id as `campaign_id`. Errors as a single send: 422 VALIDATION_ERROR, "
    "MISSING_REQUIRED_FIELD, INVALID_TEMPLATE, INVALID_FROM_NUMBER; 503 PROVIDER_NOT_WIRED. "
    "Events: `broadcast.started`, `broadcast.completed`, `broadcast.canceled`, "
    "`broadcast.failed`."
)


class BroadcastViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, TenantViewSet):
    """Broadcasts with their progress and per-campaign counters."""

    model = Broadcast
    serializer_class = s.BroadcastSerializer
    required_scopes = {"GET": READ, "POST": WRITE}

    @extend_schema(request=s.BroadcastCreateSerializer, responses={202: s.BroadcastSerializer},
                   description=_CREATE_DESCRIPTION)
    def create(self, request):
        body = s.BroadcastCreateSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        broadcast = services.broadcast_create(organization=self.organization,
                                              principal=self.principal, request=request,
                                              **body.to_service_kwargs())
        return Response(represent(s.BroadcastSerializer, broadcast),
                        status=status.HTTP_202_ACCEPTED)

    @extend_schema(request=None, responses=s.BroadcastSerializer,
                   description="Cancel a scheduled, queued or running broadcast: recipients "
                               "not yet sent to are `canceled`; messages already created go "
                               "out. Any other status: 409 CONFLICT.")
    @action(detail=True, methods=["post"])
    def cancel(self, request, pk=None):
        broadcast = services.broadcast_cancel(broadcast=self.get_object(),
                                              principal=self.principal, request=request)
        return Response(represent(s.BroadcastSerializer, broadcast))
