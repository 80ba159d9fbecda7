"""Webhook endpoints, their deliveries and the dead-letter queue (0-conventions.md 4;
Document 1, 3.1 and 4.4)."""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import mixins, status
from rest_framework.decorators import action
from rest_framework.response import Response

from platform_core.api.views import TenantViewSet
from platform_core.errors import APIError
from platform_core.webhooks import selectors, services
from platform_core.webhooks.models import WebhookDelivery, WebhookEndpoint

from . import serializers as s

READ, WRITE = "webhooks:read", "webhooks:write"

_FILTERS = [
    OpenApiParameter("event_id", OpenApiTypes.STR, many=True,
                     description="Event id; repeat the parameter or give a comma list."),
    OpenApiParameter("type", OpenApiTypes.STR, many=True,
                     description="Exact event type; repeat the parameter or give a comma list."),
    OpenApiParameter("status", OpenApiTypes.STR, many=True,
                     description="pending, succeeded or failed."),
]


class EndpointViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, TenantViewSet):
    model = WebhookEndpoint
    serializer_class = s.EndpointSerializer
    required_scopes = {"GET": READ, "POST": WRITE, "PATCH": WRITE, "DELETE": WRITE}

    @extend_schema(request=s.EndpointWriteSerializer, responses={201: s.EndpointWithSecretSerializer})
    def create(self, request):
        body = s.EndpointWriteSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        endpoint, secret = services.endpoint_create(
            organization=self.organization, url=data["url"], events=data["events"],
            description=data.get("description", ""), enabled=data.get("enabled", True),
            headers=data.get("headers") or {}, principal=self.principal, request=request,
        )
        payload = s.EndpointSerializer(endpoint).data
        payload["secret"] = secret
        return Response(payload, status=status.HTTP_201_CREATED)

    @extend_schema(request=s.EndpointWriteSerializer, responses=s.EndpointSerializer)
    def partial_update(self, request, pk=None):
        endpoint = self.get_object()
        body = s.EndpointWriteSerializer(data=request.data, partial=True)
        body.is_valid(raise_exception=True)
        endpoint = services.endpoint_update(endpoint=endpoint, principal=self.principal,
                                            request=request, **body.validated_data)
        return Response(s.EndpointSerializer(endpoint).data)

    @extend_schema(responses={204: None})
    def destroy(self, request, pk=None):
        services.endpoint_delete(endpoint=self.get_object(), principal=self.principal,
                                 request=request)
        return Response(status=status.HTTP_204_NO_CONTENT)

    @extend_schema(request=None, responses=s.EndpointWithSecretSerializer)
    @action(detail=True, methods=["post"], url_path="rotate-secret")
    def rotate_secret(self, request, pk=None):
        endpoint, secret = services.endpoint_rotate_secret(
            endpoint=self.get_object(), principal=self.principal, request=request)
        payload = s.EndpointSerializer(endpoint).data
        payload["secret"] = secret
        return Response(payload)


class DeliveryViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, TenantViewSet):
    """Deliveries of one endpoint: `/webhooks/{endpoint_id}/deliveries`."""

    model = WebhookDelivery
    serializer_class = s.DeliverySerializer
    required_scopes = {"GET": READ, "POST": WRITE}
    lookup_url_kwarg = "delivery_id"

    def scope_queryset(self, queryset):
        return queryset.filter(endpoint_id=self.kwargs.get("endpoint_id"))

    def _require_endpoint(self) -> None:
        if not WebhookEndpoint.objects.filter(pk=self.kwargs.get("endpoint_id")).exists():
            raise APIError("NOT_FOUND")

    @extend_schema(parameters=_FILTERS)
    def list(self, request, *args, **kwargs):
        self._require_endpoint()
        queryset = selectors.deliveries_filtered(self.get_queryset(), request.query_params)
        page = self.paginate_queryset(queryset)
        return self.get_paginated_response(s.DeliverySerializer(page, many=True).data)

    @extend_schema(responses=s.DeliveryDetailSerializer)
    def retrieve(self, request, *args, **kwargs):
        return Response(s.DeliveryDetailSerializer(self.get_object()).data)

    @extend_schema(request=None, responses={202: s.DeliverySerializer})
    @action(detail=True, methods=["post"])
    def retry(self, request, *args, **kwargs):
        delivery = services.delivery_retry(delivery=self.get_object(), principal=self.principal,
                                           request=request)
        return Response(s.DeliverySerializer(delivery).data, status=status.HTTP_202_ACCEPTED)

    @extend_schema(request=None, responses={202: s.ReplaySerializer})
    @action(detail=True, methods=["post"])
    def replay(self, request, *args, **kwargs):
        return _replay(self, self.get_object())


def _replay(view, delivery: WebhookDelivery) -> Response:
    replay = services.delivery_replay(delivery=delivery, principal=view.principal,
                                      request=view.request)
    return Response(
        {"replay_event_id": replay.event_id, "replay_delivery_id": replay.pk,
         "original_delivery_id": delivery.pk, "status": replay.status},
        status=status.HTTP_202_ACCEPTED,
    )


class DeadLetterViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, TenantViewSet):
    """The dead-letter queue: deliveries that failed after their whole retry schedule."""

    model = WebhookDelivery
    serializer_class = s.DeliverySerializer
    required_scopes = {"GET": READ, "POST": WRITE}
    lookup_url_kwarg = "delivery_id"

    def scope_queryset(self, queryset):
        return selectors.dead_letters(queryset)

    @extend_schema(parameters=_FILTERS)
    def list(self, request, *args, **kwargs):
        queryset = selectors.deliveries_filtered(self.get_queryset(), request.query_params)
        page = self.paginate_queryset(queryset)
        return self.get_paginated_response(s.DeliverySerializer(page, many=True).data)

    @extend_schema(responses=s.DeliveryDetailSerializer)
    def retrieve(self, request, *args, **kwargs):
        return Response(s.DeliveryDetailSerializer(self.get_object()).data)

    @extend_schema(request=None, responses={202: s.ReplaySerializer})
    @action(detail=True, methods=["post"])
    def replay(self, request, delivery_id=None):
        # Any delivery of the tenant: one that is not (or no longer) failed answers 409.
        delivery = WebhookDelivery.objects.filter(pk=delivery_id).first()
        if delivery is None:
            raise APIError("NOT_FOUND")
        return _replay(self, delivery)
