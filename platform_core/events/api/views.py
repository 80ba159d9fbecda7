"""Recent-event feed, ingestion and event-sink endpoints (Document 1, 4.5-4.7).

The live stream `GET /api/v1/events/stream` is a Channels consumer (`api/stream.py`)
routed ahead of Django by `platform_core.realtime.routing`; the Django view at that path
only answers when a WSGI server receives the request by mistake.
"""

from __future__ import annotations

import logging

from django.core.exceptions import RequestDataTooBig
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.response import Response

from platform_core.api.pagination import (
    cursor_page_response,
    decode_cursor,
    encode_cursor,
    parse_limit,
)
from platform_core.api.views import PlatformAPIView
from platform_core.errors import APIError
from platform_core.events import services
from platform_core.events.feed import FeedUnavailable, get_feed
from platform_core.events.models import SinkKind

from . import serializers as s

logger = logging.getLogger("platform_core.events")

SINK_ROLES = {"owner", "admin", "developer"}


def parse_types(request) -> frozenset[str]:
    """`type` given repeated or as a comma-separated list (exact types)."""
    return frozenset(
        part.strip()
        for value in request.query_params.getlist("type")
        for part in value.split(",")
        if part.strip()
    )


class EventListView(PlatformAPIView):
    """The recent-event feed: the tenant's newest events, newest first."""

    required_scopes = {"GET": "events:read"}

    @extend_schema(
        operation_id="events_list",
        parameters=[
            OpenApiParameter("type", str, many=True, description=(
                "Exact event type; repeat the parameter or give a comma-separated list.")),
            OpenApiParameter("limit", int, description="1-200, default 25."),
            OpenApiParameter("cursor", str, description="Opaque cursor from meta.pagination."),
        ],
        responses=s.EventEnvelopeSerializer(many=True),
        description=(
            "Events from the replay window (about the newest 5000 per organization, gone "
            "after about 15 minutes without a new event). Not durable history: use webhooks "
            "for retried delivery. If the real-time store is unavailable the page is empty."
        ),
    )
    def get(self, request):
        limit = parse_limit(request, default=25, maximum=200)
        types = parse_types(request)
        token = request.query_params.get("cursor")
        before = decode_cursor(request, token, size=1)[0] if token else None
        if before is not None and not isinstance(before, int):
            raise APIError("INVALID_CURSOR", "The cursor does not belong to this list.")
        feed = get_feed()
        org_id = self.organization.pk
        total = None
        try:
            entries, has_more = feed.page(org_id, before=before, limit=limit, types=types)
            if before is None and not types:
                total = len(entries) if not has_more else feed.size(org_id)
        except FeedUnavailable as exc:
            logger.warning("event feed unavailable, answering an empty page: %s", exc)
            entries, has_more = [], False
        return cursor_page_response(
            [entry.envelope for entry in entries],
            cursor=encode_cursor(request, [entries[-1].position]) if has_more else None,
            has_more=has_more,
            total=total,
        )


class EventDetailView(PlatformAPIView):
    required_scopes = {"GET": "events:read"}

    @extend_schema(
        operation_id="events_retrieve",
        responses={200: s.EventEnvelopeSerializer, 404: OpenApiResponse(
            description="Unknown, another organization's, or evicted from the window.")},
    )
    def get(self, request, event_id: str):
        try:
            entry = get_feed().get(self.organization.pk, event_id)
        except FeedUnavailable as exc:
            logger.warning("event feed unavailable, answering 404: %s", exc)
            entry = None
        if entry is None:
            raise APIError("NOT_FOUND", "No such event in the recent-event window.")
        return Response(entry.envelope)


class EventStreamView(PlatformAPIView):
    """Documents the SSE stream; the ASGI server (daphne) serves it ahead of Django."""

    required_scopes = {"GET": "events:read"}

    @extend_schema(
        operation_id="events_stream",
        parameters=[
            OpenApiParameter("token", str, description=(
                "For browsers (EventSource cannot send headers): the API key, promoted to "
                "X-API-Key. Query strings are never written to access logs.")),
            OpenApiParameter("Last-Event-ID", str, location=OpenApiParameter.HEADER,
                             description="Resume after this event id (inside the window)."),
        ],
        responses={200: OpenApiResponse(
            response=OpenApiTypes.STR,
            description=(
                "`text/event-stream`. Each event: `id: <event id>`, `event: <type>`, "
                "`data: <the envelope as one JSON object on one line>`; heartbeat comment "
                "lines (`: keepalive`) while idle."))},
    )
    def get(self, request):
        raise APIError(
            "SERVICE_UNAVAILABLE",
            "The event stream is served by the ASGI server (daphne); route "
            "/api/v1/events/stream to it.",
        )


class TrackView(PlatformAPIView):
    """Record a product event (segments and loyalty count them per contact)."""

    required_scopes = {"POST": "events:write"}

    def initial(self, request, *args, **kwargs):
        super().initial(request, *args, **kwargs)
        from django.conf import settings

        try:
            length = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            length = 0
        if length > settings.DATA_UPLOAD_MAX_MEMORY_SIZE:
            raise APIError("EVENT_PAYLOAD_TOO_LARGE")

    def handle_exception(self, exc):
        if isinstance(exc, RequestDataTooBig) or (
            isinstance(exc, APIError) and exc.code == "PAYLOAD_TOO_LARGE"
        ):
            exc = APIError("EVENT_PAYLOAD_TOO_LARGE")
        return super().handle_exception(exc)

    @extend_schema(
        operation_id="events_track",
        request=s.TrackSerializer,
        responses={201: s.TrackedEventSerializer, 413: OpenApiResponse(
            description="EVENT_PAYLOAD_TOO_LARGE: serialized properties above 1 MiB.")},
    )
    def post(self, request):
        body = s.TrackSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        record = services.tracked_event_record(
            organization=self.organization,
            name=data["event"],
            properties=data.get("properties") or {},
            contact_email=data.get("contact_email") or "",
            contact_phone=data.get("contact_phone") or "",
            occurred_at=data.get("occurred_at"),
        )
        return Response(s.TrackedEventSerializer(record).data, status=status.HTTP_201_CREATED)


class EventSinkView(PlatformAPIView):
    """`/developer/event-sinks/{kind}`: kafka or http_batch (others 404)."""

    required_scopes = {"GET": "event_sinks:read", "PATCH": "event_sinks:write"}
    required_roles = {"GET": SINK_ROLES, "PATCH": SINK_ROLES}

    def initial(self, request, *args, **kwargs):
        super().initial(request, *args, **kwargs)
        if kwargs.get("kind") not in SinkKind.values:
            raise APIError("NOT_FOUND", "Event sink kinds are `kafka` and `http_batch`.")

    @extend_schema(operation_id="event_sinks_retrieve", responses=s.EventSinkSerializer)
    def get(self, request, kind: str):
        sink = services.event_sink_get(organization=self.organization, kind=kind)
        return Response(s.EventSinkSerializer(sink).data)

    @extend_schema(operation_id="event_sinks_partial_update",
                   request=s.EventSinkUpdateSerializer, responses=s.EventSinkSerializer)
    def patch(self, request, kind: str):
        body = s.EventSinkUpdateSerializer(data=request.data, partial=True,
                                           context={"kind": kind})
        body.is_valid(raise_exception=True)
        sink = services.event_sink_update(
            organization=self.organization, kind=kind, changes=dict(body.validated_data),
            principal=self.principal, request=request,
        )
        return Response(s.EventSinkSerializer(sink).data)
