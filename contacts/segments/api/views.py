"""Segment endpoints (Document 2, 4.2; 0-conventions.md sections 5 and 10).

Saved segments live under `/api/v1/contacts/segments`; the ad-hoc tools (auto-suggest,
CSV export of a filter, click cohorts) under `/api/v1/segments`.
"""

from __future__ import annotations

import re

from django.http import StreamingHttpResponse
from django.utils import timezone
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import mixins, status
from rest_framework.decorators import action
from rest_framework.response import Response

from contacts.segments import autopilot, selectors, services, suggest
from contacts.segments import filters as segment_filters
from contacts.segments.masking import can_reveal
from contacts.segments.models import Segment
from platform_core.api.negotiation import DownloadNegotiation
from platform_core.api.pagination import KeysetCursorPagination
from platform_core.api.ratelimit import RateLimit
from platform_core.api.views import PlatformAPIView, TenantViewSet
from platform_core.audit.services import audit_record
from platform_core.errors import APIError
from platform_core.exports import stream_csv

from . import serializers as s

READ = "contacts:read"
WRITE = "contacts:write"
EXPORT_LIMITS = [RateLimit("segment_export", 20, 60, per="organization")]


def _filename(raw: str | None, default: str) -> str:
    stem = re.sub(r"[^A-Za-z0-9._-]+", "-", (raw or "").strip()).strip(".-")[:100]
    stem = stem[:-4] if stem.lower().endswith(".csv") else stem
    return f"{stem or default}.csv"


def csv_response(request, principal, queryset, *, filename: str, limit: int, target=None,
                 target_type: str = "", target_id: str = "") -> StreamingHttpResponse:
    """Stream up to `limit` contacts of `queryset` as CSV (phone and email masked unless the
    caller may reveal them). The truncation check and the audit row come first, so any
    failure before the first byte still answers a JSON envelope."""
    reveal = can_reveal(principal)
    matched = selectors.capped_count(queryset, limit)
    truncated = matched > limit
    audit_record(action="segment.exported", principal=principal, request=request,
                 target=target, target_type=target_type, target_id=target_id,
                 metadata={"rows": min(matched, limit), "truncated": truncated,
                           "masked": not reveal})
    rows = selectors.export_rows(queryset, limit=limit, reveal=reveal)
    response = StreamingHttpResponse(stream_csv(selectors.EXPORT_HEADER, rows),
                                     content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    response["X-Export-Row-Count"] = str(min(matched, limit))
    if truncated:
        response["X-Export-Truncated"] = "true"
    response["Cache-Control"] = "no-store"
    response["X-Content-Type-Options"] = "nosniff"
    return response


_CSV_RESPONSE = {
    (200, "text/csv"): OpenApiResponse(
        OpenApiTypes.BINARY,
        description="CSV (id, first_name, last_name, phone, email, tags, created_at); phone "
                    "and email masked without the reveal permission. `X-Export-Truncated: "
                    "true` when more rows matched than were written."),
}


class SegmentViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, TenantViewSet):
    """Saved segments: a filter tree whose membership is materialized and kept fresh."""

    model = Segment
    serializer_class = s.SegmentSerializer
    required_scopes = {"GET": READ, "POST": WRITE, "PATCH": WRITE, "DELETE": WRITE}

    @extend_schema(request=s.SegmentCreateSerializer, responses={201: s.SegmentSerializer})
    def create(self, request):
        body = s.SegmentCreateSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        segment = services.segment_create(
            principal=self.principal, name=data["name"], filters=data["filters"],
            description=data.get("description") or None, request=request,
        )
        return Response(s.SegmentSerializer(segment).data, status=status.HTTP_201_CREATED)

    @extend_schema(request=s.SegmentUpdateSerializer, responses=s.SegmentSerializer)
    def partial_update(self, request, pk=None):
        segment = self.get_object()
        body = s.SegmentUpdateSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        changes = dict(body.validated_data)
        if "description" in changes:
            changes["description"] = changes["description"] or None
        segment = services.segment_update(principal=self.principal, segment=segment,
                                          request=request, **changes)
        return Response(s.SegmentSerializer(segment).data)

    @extend_schema(responses={204: None})
    def destroy(self, request, pk=None):
        services.segment_delete(principal=self.principal, segment=self.get_object(),
                                request=request)
        return Response(status=status.HTTP_204_NO_CONTENT)

    @extend_schema(responses=s.SegmentMemberSerializer(many=True), parameters=[
        OpenApiParameter("limit", OpenApiTypes.INT, description="1-200, default 25."),
        OpenApiParameter("cursor", OpenApiTypes.STR,
                         description="Opaque cursor from meta.pagination."),
    ])
    @action(detail=True, methods=["get"], url_path="members")
    def members(self, request, pk=None):
        segment = self.get_object()
        paginator = KeysetCursorPagination(ordering=("-id",))
        page = paginator.paginate_queryset(selectors.segment_members(segment), request, self)
        return paginator.get_paginated_response(s.SegmentMemberSerializer(page, many=True).data)

    @extend_schema(responses=_CSV_RESPONSE)
    @action(detail=True, methods=["get"], url_path="export.csv",
            content_negotiation_class=DownloadNegotiation)
    def export_csv(self, request, pk=None):
        segment = self.get_object()
        return csv_response(
            request, self.principal, selectors.segment_members(segment),
            filename=_filename(None, f"segment-{segment.pk}"), limit=selectors.EXPORT_MAX_ROWS,
            target=segment,
        )


class AutopilotView(PlatformAPIView):
    """A plain-language description turned into a filter tree (nothing is stored)."""

    required_scopes = {"POST": READ}
    idempotent_posts = False

    @extend_schema(request=s.AutopilotSerializer, responses=s.AutopilotResultSerializer)
    def post(self, request):
        body = s.AutopilotSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        try:
            tree = autopilot.describe_to_filters(body.validated_data["description"],
                                                 self.organization)
        except autopilot.AutopilotParseError as exc:
            raise APIError("AI_PARSE_FAILED", str(exc)) from None
        matched = segment_filters.contacts_matching(tree, organization=self.organization)
        return Response({
            "filters": tree,
            "explanation": autopilot.explain_filters(tree),
            "matched_count": matched.count(),
        })


class AutoSuggestView(PlatformAPIView):
    required_scopes = {"POST": READ}
    idempotent_posts = False

    @extend_schema(request=s.AutoSuggestSerializer, responses=s.AutoSuggestResultSerializer)
    def post(self, request):
        body = s.AutoSuggestSerializer(data=request.data or {})
        body.is_valid(raise_exception=True)
        try:
            result = suggest.suggest_segments(self.organization,
                                              limit=body.validated_data["limit"])
        except suggest.SuggestFailed:
            raise APIError("AI_SUGGEST_FAILED") from None
        return Response(result)


class FromClicksView(PlatformAPIView):
    """A static cohort of the distinct clickers of a link or campaign; never refreshed."""

    required_scopes = {"POST": WRITE}

    @extend_schema(request=s.FromClicksSerializer, responses={201: s.SegmentSerializer})
    def post(self, request):
        body = s.FromClicksSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        segment = services.segment_create_from_clicks(
            principal=self.principal,
            link_id=(data.get("link_id") or "").strip() or None,
            campaign_id=(data.get("campaign_id") or "").strip() or None,
            window_days=data["window_days"],
            name=data.get("name") or None,
            description=data.get("description") or None,
            request=request,
        )
        return Response(s.SegmentSerializer(segment).data, status=status.HTTP_201_CREATED)


class SegmentExportView(PlatformAPIView):
    """CSV of the contacts matching a filter tree, up to 50,000 rows."""

    required_scopes = {"POST": READ}
    idempotent_posts = False  # a query: nothing to replay, and the body streams
    content_negotiation_class = DownloadNegotiation
    rate_limits = {"POST": EXPORT_LIMITS}

    @extend_schema(request=s.ExportSerializer, responses=_CSV_RESPONSE)
    def post(self, request):
        body = s.ExportSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        queryset = segment_filters.contacts_matching(data["filters"],
                                                     organization=self.organization)
        default = f"segment-export-{timezone.now():%Y%m%d-%H%M%S}"
        return csv_response(
            request, self.principal, queryset,
            filename=_filename(data.get("filename"), default),
            limit=data.get("limit") or selectors.EXPORT_MAX_ROWS,
            target_type="segment_filter", target_id="",
        )
