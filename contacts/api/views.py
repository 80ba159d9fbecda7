"""Contacts, contact lists, list members and contact exports (Document 2, 4.1;
0-conventions.md section 5)."""

from __future__ import annotations

import tempfile

from django.http import FileResponse, StreamingHttpResponse
from django.utils.http import content_disposition_header
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import mixins, status
from rest_framework.decorators import action
from rest_framework.response import Response

from contacts import exports, selectors, services
from contacts.models import Contact, ContactList, ExportJob, ListMembership
from platform_core.api.negotiation import DownloadNegotiation
from platform_core.api.pagination import KeysetCursorPagination
from platform_core.api.views import PlatformAPIView, TenantViewSet
from platform_core.errors import APIError

from . import serializers as s

READ, WRITE = "contacts:read", "contacts:write"
EXPORT_ROLES = {"owner", "admin", "developer"}

Q_PARAMETER = OpenApiParameter(
    "q", OpenApiTypes.STR, OpenApiParameter.QUERY, required=False,
    description=(
        "Free text (name fragment, phone in any form, email) and/or terms "
        "`email:x@y`, `email:*@domain`, `tag:vip`, `phone:+1415...`, `name:ann`; "
        "space-separated terms must all match. At most 500 characters."
    ),
)


def _data(body) -> dict:
    body.is_valid(raise_exception=True)
    return dict(body.validated_data)


class ContactViewSet(
    mixins.ListModelMixin, mixins.RetrieveModelMixin, TenantViewSet
):
    model = Contact
    serializer_class = s.ContactSerializer
    required_scopes = {"GET": READ, "POST": WRITE, "PATCH": WRITE, "DELETE": WRITE}

    def scope_queryset(self, queryset):
        if self.action == "list":
            queryset = queryset.filter(
                selectors.contact_q(self.request.query_params.get("q"),
                                    organization=self.organization)
            )
        return queryset

    @extend_schema(parameters=[Q_PARAMETER])
    def list(self, request, *args, **kwargs):
        return super().list(request, *args, **kwargs)

    @extend_schema(request=s.ContactWriteSerializer, responses={201: s.ContactSerializer})
    def create(self, request):
        data = _data(s.ContactWriteSerializer(data=request.data))
        contact = services.contact_create(
            organization=self.organization, principal=self.principal, request=request,
            first_name=data.get("first_name") or "", last_name=data.get("last_name") or "",
            phone=data.get("phone"), email=data.get("email"),
            custom_fields=data.get("custom_fields"), tags=data.get("tags"),
        )
        return Response(s.ContactSerializer(contact).data, status=status.HTTP_201_CREATED)

    @extend_schema(request=s.ContactWriteSerializer, responses=s.ContactSerializer)
    def partial_update(self, request, pk=None):
        contact = self.get_object()
        data = _data(s.ContactWriteSerializer(data=request.data, partial=True))
        contact = services.contact_update(contact=contact, principal=self.principal,
                                          request=request, **data)
        return Response(s.ContactSerializer(contact).data)

    @extend_schema(responses={204: None})
    def destroy(self, request, pk=None):
        services.contact_delete(contact=self.get_object(), principal=self.principal,
                                request=request)
        return Response(status=status.HTTP_204_NO_CONTENT)

    @extend_schema(responses=s.ContactListSerializer(many=True),
                   operation_id="contacts_lists_of_contact",
                   description="The lists this contact belongs to (cursor-paginated).")
    @action(detail=True, methods=["get"], url_path="lists")
    def lists(self, request, pk=None):
        contact = self.get_object()
        queryset = ContactList.objects.filter(memberships__contact_id=contact.pk)
        page = self.paginate_queryset(queryset)
        return self.get_paginated_response(s.ContactListSerializer(page, many=True).data)

    @extend_schema(
        request=s.ContactMergeSerializer, responses=s.ContactSerializer,
        description=(
            "Merge the duplicate `source_id` into this contact and delete the source, in one "
            "transaction: list memberships, tracked events and tags move; custom fields are "
            "combined (this contact wins on conflicting keys); this contact's empty names, "
            "phone and email are filled from the source. Emits `contact.merged` and "
            "`contact.deleted` (of the source)."
        ),
    )
    @action(detail=True, methods=["post"], url_path="merge")
    def merge(self, request, pk=None):
        target = self.get_object()
        data = _data(s.ContactMergeSerializer(data=request.data))
        contact = services.contact_merge(target=target, source_id=data["source_id"],
                                         principal=self.principal, request=request)
        return Response(s.ContactSerializer(contact).data)


class ContactListViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, TenantViewSet):
    model = ContactList
    serializer_class = s.ContactListSerializer
    required_scopes = {"GET": READ, "POST": WRITE, "PATCH": WRITE, "DELETE": WRITE}

    @extend_schema(request=s.ContactListWriteSerializer, responses={201: s.ContactListSerializer})
    def create(self, request):
        data = _data(s.ContactListWriteSerializer(data=request.data))
        contact_list = services.list_create(
            organization=self.organization, principal=self.principal, request=request,
            name=data["name"], description=data.get("description"),
        )
        return Response(s.ContactListSerializer(contact_list).data,
                        status=status.HTTP_201_CREATED)

    @extend_schema(request=s.ContactListWriteSerializer, responses=s.ContactListSerializer)
    def partial_update(self, request, pk=None):
        contact_list = self.get_object()
        data = _data(s.ContactListWriteSerializer(data=request.data, partial=True))
        contact_list = services.list_update(contact_list=contact_list, principal=self.principal,
                                            request=request, **data)
        return Response(s.ContactListSerializer(contact_list).data)

    @extend_schema(responses={204: None})
    def destroy(self, request, pk=None):
        services.list_delete(contact_list=self.get_object(), principal=self.principal,
                             request=request)
        return Response(status=status.HTTP_204_NO_CONTENT)

    @extend_schema(request=s.ContactListDuplicateSerializer,
                   responses={201: s.ContactListSerializer},
                   description="A new list with the same description and members.")
    @action(detail=True, methods=["post"], url_path="duplicate")
    def duplicate(self, request, pk=None):
        contact_list = self.get_object()
        data = _data(s.ContactListDuplicateSerializer(data=request.data or {}))
        copy = services.list_duplicate(contact_list=contact_list, principal=self.principal,
                                       request=request, name=data.get("name"))
        return Response(s.ContactListSerializer(copy).data, status=status.HTTP_201_CREATED)

    @extend_schema(responses=s.ListStatsSerializer)
    @action(detail=True, methods=["get"], url_path="stats")
    def stats(self, request, pk=None):
        return Response(selectors.list_stats(self.get_object()))


class MemberPagination(KeysetCursorPagination):
    ordering = ("-added_at", "-contact_id")


@extend_schema(parameters=[OpenApiParameter("list_id", OpenApiTypes.STR, OpenApiParameter.PATH,
                                             description="The list (`lst_...`).")])
class ListMemberViewSet(mixins.ListModelMixin, TenantViewSet):
    """Members of one list: `/contacts/lists/{list_id}/members`."""

    model = ListMembership
    serializer_class = s.ListMemberSerializer
    pagination_class = MemberPagination
    required_scopes = {"GET": READ, "POST": WRITE, "DELETE": WRITE}
    lookup_url_kwarg = "contact_id"

    def scope_queryset(self, queryset):
        queryset = queryset.filter(contact_list_id=self.kwargs.get("list_id")).select_related(
            "contact"
        )
        if self.action == "list":
            queryset = queryset.filter(
                selectors.contact_q(self.request.query_params.get("q"),
                                    organization=self.organization, prefix="contact__")
            )
        return queryset

    def _list(self) -> ContactList:
        contact_list = ContactList.objects.filter(pk=self.kwargs.get("list_id")).first()
        if contact_list is None:
            raise APIError("NOT_FOUND")
        return contact_list

    @extend_schema(parameters=[Q_PARAMETER])
    def list(self, request, *args, **kwargs):
        self._list()
        return super().list(request, *args, **kwargs)

    @extend_schema(
        request=s.MemberAddSerializer,
        responses={201: s.MemberAddResultSerializer,
                   200: OpenApiResponse(s.MemberAddResultSerializer,
                                        description="Already a member; nothing written."),
                   404: OpenApiResponse(description="CONTACT_NOT_FOUND_FOR_IDENTIFIER")},
    )
    def create(self, request, *args, **kwargs):
        contact_list = self._list()
        data = _data(s.MemberAddSerializer(data=request.data))
        contact, created = services.list_member_add(
            contact_list=contact_list, identifier=data["identifier"], principal=self.principal,
            request=request,
        )
        body = {"list_id": contact_list.pk, "contact_id": contact.pk,
                "already_member": not created}
        return Response(body, status=status.HTTP_201_CREATED if created else status.HTTP_200_OK)

    @extend_schema(request=s.BulkAddSerializer, responses=s.BulkAddResultSerializer,
                   description="Add up to 1000 contacts by id. Unknown ids (or another "
                               "organization's) are returned in `failed_contact_ids`; "
                               "contacts already on the list are not counted in `added`.")
    @action(detail=False, methods=["post"], url_path="bulk")
    def bulk(self, request, *args, **kwargs):
        contact_list = self._list()
        data = _data(s.BulkAddSerializer(data=request.data))
        added, failed = services.list_members_bulk_add(
            contact_list=contact_list, contact_ids=data["contact_ids"],
            principal=self.principal, request=request,
        )
        return Response({"added": added, "failed_contact_ids": failed})

    @extend_schema(responses={204: None})
    def destroy(self, request, *args, **kwargs):
        contact_list = self._list()
        services.list_member_remove(contact_list=contact_list,
                                    contact_id=self.kwargs["contact_id"],
                                    principal=self.principal, request=request)
        return Response(status=status.HTTP_204_NO_CONTENT)


# --- Exports --------------------------------------------------------------------------------


EXPORT_QUERY = [
    OpenApiParameter("format", OpenApiTypes.STR, OpenApiParameter.QUERY, required=False,
                     enum=["csv", "xlsx"], description="csv (default) or xlsx."),
    OpenApiParameter("filename", OpenApiTypes.STR, OpenApiParameter.QUERY, required=False,
                     description="Download name; unsafe characters are replaced and the "
                                 "extension added."),
]


class ContactExportView(PlatformAPIView):
    """Stream the selected contacts as CSV or XLSX."""

    required_scopes = {"POST": READ}
    required_roles = {"POST": EXPORT_ROLES}
    idempotent_posts = False  # a download, not a creation
    content_negotiation_class = DownloadNegotiation

    @extend_schema(
        request=s.ExportFilterSerializer,
        parameters=EXPORT_QUERY,
        responses={
            (200, "text/csv"): OpenApiResponse(OpenApiTypes.BINARY,
                                               description="Streamed CSV."),
            (200, "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"):
                OpenApiResponse(OpenApiTypes.BINARY, description="XLSX workbook."),
            422: OpenApiResponse(description="VALIDATION_ERROR, or EXPORT_TOO_LARGE above "
                                             "10,000 rows (use /contacts/bulk/export)."),
        },
        description=(
            "Every selected contact with one column per custom-field key, at most 10,000 "
            "rows (more: 422 EXPORT_TOO_LARGE, use POST /contacts/bulk/export). Owner, admin "
            "or developer only; audit-logged. Errors before streaming are JSON envelopes; "
            "CSV cells are protected against spreadsheet formula injection."
        ),
    )
    def post(self, request):
        fmt = exports.parse_format(request.query_params.get("format"))
        filename = exports.clean_filename(request.query_params.get("filename"), fmt)
        filters = _data(s.ExportFilterSerializer(data=request.data or {}))
        queryset, header, rows = exports.export_prepare(
            organization=self.organization, principal=self.principal, filters=filters,
            fmt=fmt, filename=filename, request=request,
        )
        keys = exports.header_keys(header)
        if fmt == "xlsx":
            spool = tempfile.TemporaryFile()  # noqa: SIM115 (FileResponse closes it)
            exports.write_xlsx(spool, header, exports.export_rows(queryset, keys))
            spool.seek(0)
            response = FileResponse(spool, as_attachment=True, filename=filename,
                                    content_type=exports.CONTENT_TYPES["xlsx"])
        else:
            response = StreamingHttpResponse(
                exports.stream_csv(header, exports.export_rows(queryset, keys)),
                content_type=exports.CONTENT_TYPES["csv"],
            )
            response["Content-Disposition"] = content_disposition_header(True, filename)
        response["X-Export-Rows"] = str(rows)
        response["Cache-Control"] = "no-store"
        return response


class ContactBulkExportView(PlatformAPIView):
    """Queue a background export of any size."""

    required_scopes = {"POST": READ}
    required_roles = {"POST": EXPORT_ROLES}

    @extend_schema(
        request=s.BulkExportSerializer, responses={202: s.ExportJobSerializer},
        description=(
            "Body: the export filters plus `format` (csv or xlsx) and `filename`. Answers the "
            "queued job; follow it at GET /contacts/exports/{id} (`rows_done`/`rows_total`, "
            "then `download_url`). Emits `contact.export.completed` or "
            "`contact.export.failed`."
        ),
    )
    def post(self, request):
        data = _data(s.BulkExportSerializer(data=request.data or {}))
        fmt = data.pop("format", "csv") or "csv"
        filename = exports.clean_filename(data.pop("filename", ""), fmt)
        # `contact_ids: []` selects no contact (as in the streamed export), so only absent
        # values are dropped.
        filters = {k: v for k, v in data.items() if v not in (None, "")}
        job = exports.export_job_create(
            organization=self.organization, principal=self.principal, filters=filters,
            fmt=fmt, filename=filename, request=request,
        )
        return Response(s.ExportJobSerializer(job).data, status=status.HTTP_202_ACCEPTED)


class ExportJobViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, TenantViewSet):
    model = ExportJob
    serializer_class = s.ExportJobSerializer
    required_scopes = {"GET": READ}
    required_roles = {"GET": EXPORT_ROLES}

    def scope_queryset(self, queryset):
        return queryset.select_related("file")
