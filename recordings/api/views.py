"""Recordings (Document 3, 4.6; 0-conventions section 9)."""

from __future__ import annotations

from django.http import StreamingHttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import mixins, status
from rest_framework.decorators import action
from rest_framework.parsers import JSONParser
from rest_framework.response import Response

from platform_core.api.negotiation import DownloadNegotiation
from platform_core.api.views import PublicAPIView, TenantViewSet
from platform_core.errors import APIError, validation_error
from platform_core.files.uploads import LimitedMultiPartParser
from recordings import media, selectors, services, shares
from recordings.keys import MediaTampered
from recordings.models import Recording

from . import serializers as s

READ, WRITE = "voice:read", "voice:write"
ADMINS = {"owner", "admin"}
ID_MAX = 128


def check_id(value: str) -> None:
    if not 1 <= len(value) <= ID_MAX:
        raise validation_error("id", f"The id is 1-{ID_MAX} characters.", status=400)


class RecordingViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, TenantViewSet):
    model = Recording
    serializer_class = s.RecordingSerializer
    parser_classes = [JSONParser, LimitedMultiPartParser]
    required_scopes = {"GET": READ, "POST": WRITE, "PUT": WRITE, "share": "video:write",
                       "share_revoke": "video:write"}
    required_roles = {"legal_hold_set": ADMINS, "seal": ADMINS}

    def initial(self, request, *args, **kwargs):
        super().initial(request, *args, **kwargs)
        if "pk" in kwargs:
            check_id(kwargs["pk"])

    def scope_queryset(self, queryset):
        queryset = queryset.select_related("seal")
        if self.action == "list":
            kind = self.request.query_params.get("kind")
            if kind:
                if kind not in ("call", "video"):
                    raise validation_error("kind", "kind is call or video.", status=400)
                queryset = queryset.filter(kind=kind)
        return queryset

    @extend_schema(parameters=[OpenApiParameter("kind", OpenApiTypes.STR,
                                                enum=["call", "video"])])
    def list(self, request, *args, **kwargs):
        return super().list(request, *args, **kwargs)

    @extend_schema(
        request={"multipart/form-data": s.RecordingUploadSerializer,
                 "application/json": s.RecordingURLSerializer},
        responses={201: s.RecordingSerializer},
        description=(
            "Register a recording: multipart `file` (hashed while it streams to storage, "
            "stored encrypted, status `completed`), or JSON `media_url` (+ optional "
            "`content_sha256`): the media is fetched in the background (status "
            "`processing`, then `completed`, or `failed` when it cannot be fetched or its "
            "hash differs). `kind` is `call` or `video`; `session_id` links the artefacts "
            "of one video session or call."),
    )
    def create(self, request):
        if request.content_type.startswith("multipart/"):
            body = s.RecordingUploadSerializer(data=request.data)
            body.is_valid(raise_exception=True)
            data = dict(body.validated_data)
            recording = services.recording_register_upload(
                principal=self.principal, uploaded=data.pop("file"), request=request, **data)
        else:
            body = s.RecordingURLSerializer(data=request.data)
            body.is_valid(raise_exception=True)
            recording = services.recording_register_url(
                principal=self.principal, request=request, **body.validated_data)
        return Response(s.RecordingSerializer(recording).data, status=status.HTTP_201_CREATED)

    def _hold(self, recording: Recording) -> dict:
        return {"recording_id": recording.pk, "legal_hold": recording.legal_hold,
                "reason": recording.legal_hold_reason or None,
                "updated_by": recording.legal_hold_updated_by or None,
                "updated_at": recording.legal_hold_updated_at}

    @extend_schema(responses=s.LegalHoldOutSerializer)
    @action(detail=True, methods=["get"], url_path="legal-hold")
    def legal_hold(self, request, pk=None):
        return Response(s.LegalHoldOutSerializer(self._hold(self.get_object())).data)

    @extend_schema(request=s.LegalHoldSerializer, responses=s.LegalHoldOutSerializer,
                   description="Owner or admin with voice:write; audit-logged. A held "
                               "recording and every recording of its session are exempt "
                               "from the retention sweep.")
    @legal_hold.mapping.put
    def legal_hold_set(self, request, pk=None):
        recording = self.get_object()
        body = s.LegalHoldSerializer(data=request.data)
        if not body.is_valid():
            raise APIError("VALIDATION_ERROR", status=400, details={"issues": [
                {"field": f, "message": str(m[0])} for f, m in body.errors.items()]})
        recording = services.legal_hold_set(principal=self.principal, recording=recording,
                                            request=request, **body.validated_data)
        return Response(s.LegalHoldOutSerializer(self._hold(recording)).data)

    @extend_schema(responses=s.IntegritySerializer)
    @action(detail=True, methods=["get"], url_path="integrity")
    def integrity(self, request, pk=None):
        recording = self.get_object()
        link = selectors.seal_of(recording)
        return Response(s.IntegritySerializer({
            "recording_id": recording.pk, "sealed": link is not None, "seal": link}).data)

    @extend_schema(responses=s.VerifySerializer,
                   description="Re-hashes the decrypted media and recomputes the chain. "
                               "`reason`: ok, not_sealed, chain_broken, media_tampered, "
                               "content_hash_mismatch, media_unavailable.")
    @action(detail=True, methods=["get"], url_path="integrity/verify")
    def integrity_verify(self, request, pk=None):
        return Response(selectors.verify(self.get_object()))

    @extend_schema(responses=OpenApiTypes.OBJECT,
                   description="HMAC-signed portable digest; unsealed: 400 "
                               "RECORDING_INTEGRITY_NOT_SEALED. See docs/recordings.md.")
    @action(detail=True, methods=["get"], url_path="integrity/export-digest")
    def integrity_export_digest(self, request, pk=None):
        return Response(selectors.export_digest(self.get_object()))

    @extend_schema(request=s.SealInSerializer, responses={201: s.SealSerializer})
    @action(detail=True, methods=["post"], url_path="integrity/seal")
    def seal(self, request, pk=None):
        recording = self.get_object()
        body = s.SealInSerializer(data=request.data or {})
        if not body.is_valid():
            raise APIError("VALIDATION_ERROR", status=400, details={"issues": [
                {"field": f, "message": str(m[0])} for f, m in body.errors.items()]})
        link = services.seal(principal=self.principal, recording=recording, request=request,
                             content_sha256=body.validated_data.get("content_sha256"),
                             encryption_algorithm=body.validated_data.get(
                                 "encryption_algorithm"))
        return Response(s.SealSerializer(link).data, status=status.HTTP_201_CREATED)

    @extend_schema(request=s.ShareInSerializer, responses={201: s.ShareSerializer})
    @action(detail=True, methods=["post"], url_path="share")
    def share(self, request, pk=None):
        recording = self.get_object()
        body = s.ShareInSerializer(data=request.data or {})
        if not body.is_valid():
            raise APIError("VALIDATION_ERROR", status=400, details={"issues": [
                {"field": f, "message": str(m[0])} for f, m in body.errors.items()]})
        shared = services.share_create(principal=self.principal, recording=recording,
                                       seconds=body.validated_data.get("expires_in_seconds"),
                                       request=request)
        return Response(s.ShareSerializer({
            "recording_id": recording.pk, "share_url": shared.url, "token": shared.token,
            "expires_at": shared.expires_at, "revocable": True}).data,
            status=status.HTTP_201_CREATED)

    @extend_schema(responses=s.RevokeSerializer)
    @share.mapping.delete
    def share_revoke(self, request, pk=None):
        recording = services.share_revoke(principal=self.principal,
                                          recording=self.get_object(), request=request)
        return Response({"recording_id": recording.pk, "revoked": True})


class RecordingContentView(PublicAPIView):
    """The target of share and download links: the token is the credential."""

    content_negotiation_class = DownloadNegotiation

    @extend_schema(
        auth=[],
        parameters=[
            OpenApiParameter("expires", OpenApiTypes.INT, OpenApiParameter.QUERY, required=True),
            OpenApiParameter("token", OpenApiTypes.STR, OpenApiParameter.QUERY, required=True),
        ],
        responses={(200, "application/octet-stream"): OpenApiResponse(OpenApiTypes.BINARY),
                   403: OpenApiResponse(description="RECORDING_SHARE_LINK_INVALID")},
    )
    def get(self, request, pk: str):
        check_id(pk)
        recording = Recording.objects.dangerously_unscoped().filter(pk=pk).first()
        if recording is None or not recording.has_media or not shares.valid(
                recording, expires=request.query_params.get("expires"),
                token=request.query_params.get("token")):
            raise APIError("RECORDING_SHARE_LINK_INVALID")
        stream = media.plaintext(recording)
        try:
            first = next(stream)
        except (MediaTampered, FileNotFoundError, StopIteration):
            raise APIError("NOT_FOUND", "The media is unavailable.") from None

        def body():
            yield first
            yield from stream

        response = StreamingHttpResponse(body(), content_type=recording.content_type or
                                         "application/octet-stream")
        if recording.size is not None:
            response["Content-Length"] = str(recording.size)
        response["X-Content-Type-Options"] = "nosniff"
        response["Content-Security-Policy"] = "sandbox; default-src 'none'"
        response["Cache-Control"] = "private, no-store"
        return response
