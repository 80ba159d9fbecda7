"""Management routes of the knowledge bases (Document 3, 4.2 and 4.3): document versions,
diff and rollback, publication, the organization's staleness scorecard, connectors and
their catalog. Thin: validation here, writes in the services, reads in selectors."""

from __future__ import annotations

from django.http import Http404
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import mixins, status
from rest_framework.response import Response

from knowledge import publication, selectors, staleness, versions
from knowledge.connectors import catalog
from knowledge.connectors import services as connectors
from knowledge.connectors.models import Connector
from knowledge.models import DocumentVersion
from platform_core.api.pagination import KeysetCursorPagination
from platform_core.api.serialization import validated_input
from platform_core.api.views import PlatformAPIView, TenantViewSet

from . import manage_serializers as m
from . import serializers as s
from .views import DocumentViewSet, InKnowledgeBase

READ, WRITE = "knowledge:read", "knowledge:write"
SCOPES = {"GET": READ, "POST": WRITE, "PATCH": WRITE, "PUT": WRITE, "DELETE": WRITE}
MANAGERS = {"owner", "admin", "developer"}


class DocumentManageViewSet(DocumentViewSet):
    """`/knowledge-bases/{kb_pk}/documents/{pk}/versions|versions/diff|rollback|publication`."""

    required_scopes = SCOPES
    required_roles = {"publication": MANAGERS}

    @extend_schema(responses=m.VersionSerializer(many=True),
                   description="The head (first page only) then the kept snapshots, newest "
                               "first; keyset-paged over the snapshots.")
    def versions(self, request, kb_pk=None, pk=None):
        document = self.get_object()
        paginator = KeysetCursorPagination(ordering=("-version",), max_limit=100)
        rows = paginator.paginate_queryset(
            DocumentVersion.objects.filter(document=document).defer("content"), request)
        items = [versions.snapshot_entry(row) for row in rows]
        if not request.query_params.get("cursor"):
            items.insert(0, versions.head_entry(document))
        return paginator.get_paginated_response(m.VersionSerializer(items, many=True).data)

    @extend_schema(parameters=[OpenApiParameter("from", int, required=True),
                               OpenApiParameter("to", int, required=True)],
                   responses=m.DiffSerializer,
                   description="Line counts and unified hunks from `from` to `to`; 422 "
                               "KNOWLEDGE_VERSION_NOT_RETAINED when a side's content was "
                               "over the size cap.")
    def diff(self, request, kb_pk=None, pk=None):
        query = validated_input(m.DiffQuerySerializer, request.query_params).validated_data
        result = versions.diff(self.get_object(), query["from"], query["to"])
        return Response(m.DiffSerializer(result).data)

    @extend_schema(request=m.RollbackInSerializer, responses={202: s.DocumentSerializer},
                   description="The head is snapshotted, the version's content becomes a "
                               "new head and is re-indexed.")
    def rollback(self, request, kb_pk=None, pk=None):
        body = validated_input(m.RollbackInSerializer, request.data).validated_data
        document = versions.rollback(principal=self.principal, document=self.get_object(),
                                     version=body["version"])
        return Response(s.DocumentSerializer(document).data, status=status.HTTP_202_ACCEPTED)

    @extend_schema(request=m.PublicationInSerializer, responses=s.DocumentSerializer,
                   description="Owner, admin or developer; audit-logged.")
    def publication(self, request, kb_pk=None, pk=None):
        body = validated_input(m.PublicationInSerializer, request.data).validated_data
        document = publication.publish(principal=self.principal, document=self.get_object(),
                                       is_public=body["is_public"], slug=body.get("slug"),
                                       summary=body.get("summary"), request=request)
        return Response(s.DocumentSerializer(document).data)


class KBStalenessView(PlatformAPIView):
    """`/ai/kb/staleness`: the scorecard over every document of the organization."""

    required_scopes = {"GET": READ}

    @extend_schema(parameters=[m.AIStalenessQuerySerializer], responses=s.StalenessSerializer)
    def get(self, request):
        query = validated_input(m.AIStalenessQuerySerializer,
                                request.query_params).validated_data
        return Response(s.StalenessSerializer(staleness.scorecard(
            default_threshold_days=query["default_threshold_days"],
            limit=query["limit"])).data)


class ConnectorCatalogView(PlatformAPIView):
    required_scopes = {"GET": READ}

    @extend_schema(parameters=[m.CatalogQuerySerializer],
                   responses=m.CatalogEntrySerializer(many=True))
    def get(self, request):
        query = validated_input(m.CatalogQuerySerializer, request.query_params).validated_data
        found = catalog.entries(connected=selectors.connected_kinds(), category=query.get("category"),
                                status=query.get("status"), search=query.get("search"))
        return Response(m.CatalogEntrySerializer(found, many=True).data)


class ConnectorCatalogDetailView(PlatformAPIView):
    required_scopes = {"GET": READ}

    @extend_schema(responses=m.CatalogEntrySerializer)
    def get(self, request, pk: str):
        entry = catalog.BY_ID.get(pk)
        if entry is None:
            raise Http404
        connected = pk in selectors.connected_kinds()
        return Response(m.CatalogEntrySerializer(
            catalog.as_dict(entry, "connected" if connected else "available")).data)


class ConnectorViewSet(InKnowledgeBase, mixins.ListModelMixin, TenantViewSet):
    """`/knowledge-bases/{kb_pk}/connectors[/{pk}[/sync]]`."""

    model = Connector
    serializer_class = m.ConnectorSerializer
    required_scopes = SCOPES
    required_roles = {"POST": MANAGERS, "PATCH": MANAGERS, "DELETE": MANAGERS}


    @extend_schema(request=m.ConnectorInSerializer, responses={201: m.ConnectorSerializer},
                   description="Owner, admin or developer. Credentials are encrypted and "
                               "never returned; a scheduled connector syncs on the next "
                               "drain.")
    def create(self, request, kb_pk=None):
        body = validated_input(m.ConnectorInSerializer, request.data).validated_data
        connector = connectors.connector_create(
            principal=self.principal, kb=self.kb, kind=body["type"], name=body["name"],
            config=body["config"], credentials=body["credentials"],
            sync_interval_minutes=body["sync_interval_minutes"], status=body["status"])
        return Response(m.ConnectorSerializer(connector).data, status=status.HTTP_201_CREATED)

    @extend_schema(request=m.ConnectorPatchSerializer, responses=m.ConnectorSerializer)
    def partial_update(self, request, kb_pk=None, pk=None):
        connector = self.get_object()
        body = m.ConnectorPatchSerializer(data=request.data, context={"kind": connector.kind})
        body.is_valid(raise_exception=True)
        connector = connectors.connector_update(principal=self.principal, connector=connector,
                                                changes=body.validated_data)
        return Response(m.ConnectorSerializer(connector).data)

    @extend_schema(responses={204: None},
                   description="The documents it brought in stay in the base.")
    def destroy(self, request, kb_pk=None, pk=None):
        connectors.connector_delete(principal=self.principal, connector=self.get_object())
        return Response(status=status.HTTP_204_NO_CONTENT)

    @extend_schema(request=None, responses={202: m.ConnectorSerializer},
                   description="Sync now, in the background (a no-op while one is queued "
                               "or running); 409 when the connector is paused.")
    def sync(self, request, kb_pk=None, pk=None):
        connector = connectors.request_sync(principal=self.principal,
                                            connector=self.get_object())
        return Response(m.ConnectorSerializer(connector).data, status=status.HTTP_202_ACCEPTED)
