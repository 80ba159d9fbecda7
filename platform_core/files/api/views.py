"""Files endpoints (Document 2, 4.10): upload, list, read, presign, delete, signed download."""

from __future__ import annotations

from django.core.files.storage import default_storage
from django.http import FileResponse
from django.utils import timezone
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import mixins, status
from rest_framework.decorators import action
from rest_framework.response import Response

from platform_core.api.negotiation import DownloadNegotiation
from platform_core.api.views import PublicAPIView, TenantViewSet
from platform_core.errors import APIError
from platform_core.files import selectors, services, signed_urls
from platform_core.files.models import StoredFile
from platform_core.files.uploads import LimitedMultiPartParser

from . import serializers as s

TTL_PARAMETER = OpenApiParameter(
    "ttl_ms", OpenApiTypes.INT, OpenApiParameter.QUERY, required=False,
    description=(
        f"Lifetime of the signed URL in milliseconds: default {signed_urls.DEFAULT_TTL_MS}, "
        f"clamped to {signed_urls.MIN_TTL_MS}..{signed_urls.MAX_TTL_MS}. "
        "Not an integer: 400 VALIDATION_ERROR."
    ),
)


class FileViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, TenantViewSet):
    """Files of the organization. Each answer carries a signed download `url`."""

    model = StoredFile
    serializer_class = s.StoredFileSerializer
    required_scopes = {"GET": "files:read", "POST": "files:write", "DELETE": "files:write"}

    def scope_queryset(self, queryset):
        if self.action == "list":
            purpose = self.request.query_params.get("purpose")
            if purpose:
                queryset = queryset.filter(purpose=purpose)
        return queryset

    @extend_schema(parameters=[OpenApiParameter(
        "purpose", OpenApiTypes.STR, OpenApiParameter.QUERY, required=False,
        description="Only files uploaded with this purpose.")])
    def list(self, request, *args, **kwargs):
        return super().list(request, *args, **kwargs)

    @extend_schema(
        request={"multipart/form-data": s.FileUploadSerializer},
        parameters=[TTL_PARAMETER],
        responses={201: s.StoredFileSerializer},
        description="Multipart `file` (at most 25 MB, larger: 413 FILE_TOO_LARGE) and `purpose`.",
    )
    @action(detail=False, methods=["post"], url_path="upload",
            parser_classes=[LimitedMultiPartParser])
    def upload(self, request):
        ttl_ms = signed_urls.parse_ttl_ms(request.query_params.get("ttl_ms"))
        body = s.FileUploadSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        stored = services.file_upload(
            principal=self.principal,
            uploaded=body.validated_data["file"],
            purpose=body.validated_data["purpose"],
            request=request,
        )
        data = s.StoredFileSerializer(stored, context={"ttl_ms": ttl_ms}).data
        return Response(data, status=status.HTTP_201_CREATED)

    @extend_schema(parameters=[TTL_PARAMETER], responses=s.SignedURLSerializer)
    @action(detail=True, methods=["get"], url_path="presign")
    def presign(self, request, pk=None):
        stored = self.get_object()
        ttl_ms = signed_urls.parse_ttl_ms(request.query_params.get("ttl_ms"))
        return Response(s.SignedURLSerializer(signed_urls.signed_url(stored, ttl_ms=ttl_ms)).data)

    @extend_schema(responses={204: None})
    def destroy(self, request, pk=None):
        services.file_delete(principal=self.principal, stored_file=self.get_object(),
                             request=request)
        return Response(status=status.HTTP_204_NO_CONTENT)


class FileContentView(PublicAPIView):
    """The target of a platform-signed URL: the signature is the credential."""

    content_negotiation_class = DownloadNegotiation

    @extend_schema(
        auth=[],
        parameters=[
            OpenApiParameter("expires", OpenApiTypes.INT, OpenApiParameter.QUERY, required=True,
                             description="Unix seconds after which the URL is refused."),
            OpenApiParameter("signature", OpenApiTypes.STR, OpenApiParameter.QUERY,
                             required=True, description="HMAC-SHA256 of the file id and expiry."),
        ],
        responses={
            (200, "application/octet-stream"): OpenApiResponse(
                OpenApiTypes.BINARY, description="The file, with its content type."),
            403: OpenApiResponse(description="URL_SIGNATURE_INVALID or URL_EXPIRED."),
        },
    )
    def get(self, request, pk: str):
        expires = request.query_params.get("expires")
        signed_urls.verify(pk, expires=expires, signature=request.query_params.get("signature"))
        stored = selectors.file_for_download(pk)
        if stored is None:
            raise APIError("NOT_FOUND")
        try:
            handle = default_storage.open(stored.storage_name, "rb")
        except FileNotFoundError:
            raise APIError("NOT_FOUND") from None
        response = FileResponse(handle, as_attachment=True, filename=stored.filename,
                                content_type=stored.content_type)
        response.setdefault("Content-Length", str(stored.size))
        response["ETag"] = f'"{stored.sha256}"'
        remaining = max(int(expires) - int(timezone.now().timestamp()), 0)
        response["Cache-Control"] = f"private, max-age={remaining}"
        # User-supplied bytes: never sniffed, never run as a page on the API's origin.
        response["X-Content-Type-Options"] = "nosniff"
        response["Content-Security-Policy"] = "sandbox; default-src 'none'"
        return response
