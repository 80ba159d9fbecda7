"""IVR flows (Document 3, 4.10) and the voice provider's call webhook."""

from __future__ import annotations

from django.conf import settings
from django.http import HttpResponse, QueryDict
from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import mixins, status
from rest_framework.decorators import action
from rest_framework.response import Response

from messaging.inbound import signatures
from messaging.inbound.public_urls import requested_public_url
from platform_core.api.views import PublicAPIView, TenantViewSet
from platform_core.errors import APIError
from platform_core.tenancy.context import tenant_context
from platform_core.tenancy.models import Organization
from voice import services, twiml
from voice.models import IvrFlow, IvrFlowVersion, IvrNumber

from . import serializers as s

READ, WRITE = "voice:read", "voice:write"


class IvrFlowViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, TenantViewSet):
    model = IvrFlow
    serializer_class = s.FlowSerializer
    required_scopes = {"GET": READ, "POST": WRITE, "PUT": WRITE, "PATCH": WRITE,
                       "DELETE": WRITE}

    def scope_queryset(self, queryset):
        return queryset.prefetch_related("numbers")

    @extend_schema(request=s.FlowInSerializer, responses={201: s.FlowSerializer},
                   description="Create a draft; the graph is validated on save (422 "
                               "VALIDATION_ERROR with details.node_id and details.rule).")
    def create(self, request):
        body = s.FlowInSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        flow = services.flow_create(principal=self.principal, request=request,
                                    **body.validated_data)
        return Response(s.FlowSerializer(flow).data, status=status.HTTP_201_CREATED)

    def _update(self, request, partial: bool):
        flow = self.get_object()
        body = (s.FlowPatchSerializer if partial else s.FlowInSerializer)(data=request.data)
        body.is_valid(raise_exception=True)
        data = {k: v for k, v in body.validated_data.items() if k in body.initial_data}
        if not partial:
            data = dict(body.validated_data)
        flow = services.flow_update(principal=self.principal, flow=flow, request=request,
                                    **data)
        return Response(s.FlowSerializer(IvrFlow.objects.prefetch_related("numbers").get(
            pk=flow.pk)).data)

    @extend_schema(request=s.FlowInSerializer, responses=s.FlowSerializer)
    def update(self, request, pk=None):
        return self._update(request, partial=False)

    @extend_schema(request=s.FlowPatchSerializer, responses=s.FlowSerializer)
    def partial_update(self, request, pk=None):
        return self._update(request, partial=True)

    @extend_schema(responses={204: None})
    def destroy(self, request, pk=None):
        services.flow_delete(principal=self.principal, flow=self.get_object(), request=request)
        return Response(status=status.HTTP_204_NO_CONTENT)

    @extend_schema(request=None, responses={200: s.PublishSerializer})
    @action(detail=True, methods=["post"], url_path="publish")
    def publish(self, request, pk=None):
        flow = self.get_object()
        published = services.flow_publish(principal=self.principal, flow=flow, request=request)
        return Response({"id": flow.pk, "version": published.version,
                         "published_at": published.published_at})

    @extend_schema(responses=s.PreviewSerializer,
                   description="The TwiML the provider gets when a call starts on the latest "
                               "published version; never published: 409 "
                               "IVR_FLOW_NOT_PUBLISHED.")
    @action(detail=True, methods=["get"], url_path="twiml")
    def preview(self, request, pk=None):
        flow = self.get_object()
        published = IvrFlowVersion.objects.filter(flow=flow).order_by("-version").first()
        if published is None:
            raise APIError("IVR_FLOW_NOT_PUBLISHED")
        walk = twiml.Walk(definition=published.definition, base_url=call_url(flow.organization),
                          flow_id=flow.pk, version=published.version)
        return Response({"version": published.version, "twiml": walk.start()})


def call_url(organization) -> str:
    return settings.PUBLIC_BASE_URL + reverse("voice-twilio",
                                              kwargs={"org_slug": organization.slug})


def _int(text: str | None, default: int) -> int:
    return int(text) if text and text.isdigit() and len(text) < 9 else default


def _verified(request, org_slug: str) -> tuple[Organization, QueryDict]:
    from messaging.providers.models import ProviderAccount

    try:
        raw = request._request.body
    except Exception:  # noqa: BLE001 - a body already consumed counts as missing
        raw = b""
    if not raw:
        raise APIError("WEBHOOK_BODY_MISSING")
    organization = Organization.objects.filter(slug=org_slug, is_active=True).first()
    if organization is None:
        raise APIError("INVALID_SIGNATURE")
    tokens = [str(a.credentials.get("auth_token")) for a in ProviderAccount.objects
              .for_organization(organization).filter(provider="twilio", enabled=True)
              if a.credentials.get("auth_token")]
    try:
        params = QueryDict(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise APIError("INVALID_SIGNATURE") from None
    mapping = {name: params.getlist(name) for name in params}
    url = requested_public_url(request)
    signature = request.META.get("HTTP_X_TWILIO_SIGNATURE", "")
    if not any(signatures.twilio_valid(token=t, url=url, params=mapping, raw_body=raw,
                                       signature=signature, algorithm="HMAC_SHA1")
               for t in tokens):
        raise APIError("INVALID_SIGNATURE")
    return organization, params


class TwilioVoiceView(PublicAPIView):
    """Twilio's voice webhook: the incoming call and every step of the IVR walk."""

    idempotent_posts = False

    @extend_schema(
        operation_id="voice_twilio_call",
        auth=[],
        parameters=[OpenApiParameter("org_slug", OpenApiTypes.STR, OpenApiParameter.PATH)],
        request={"application/x-www-form-urlencoded": OpenApiTypes.OBJECT},
        responses={(200, "text/xml"): OpenApiTypes.STR,
                   400: OpenApiResponse(description="WEBHOOK_BODY_MISSING"),
                   401: OpenApiResponse(description="INVALID_SIGNATURE")},
        description=(
            "Configure as the voice URL of the organization's numbers at Twilio. Signed with "
            "X-Twilio-Signature (the Twilio account's Auth Token). A call to a number bound to "
            "an active, published flow walks that flow (see docs/voice.md); any other number "
            "hears 'not in service'. Voicemail recordings are registered as call recordings."),
    )
    def post(self, request, org_slug: str):
        organization, params = _verified(request, org_slug)
        query = request.query_params
        with tenant_context(organization):
            if query.get("event") == "recording":
                return self._recording(organization, params)
            if query.get("event") == "recorded":
                return _xml(twiml.document("<Hangup/>"))
            flow_id, node = query.get("flow"), query.get("node")
            if flow_id and node:
                published = IvrFlowVersion.objects.filter(
                    flow_id=flow_id, version=_int(query.get("version"), 0)).first()
                if published is None:
                    return _xml(twiml.out_of_service())
                walk = twiml.Walk(definition=published.definition,
                                  base_url=call_url(organization), flow_id=flow_id,
                                  version=published.version)
                if query.get("after") == "dial" and params.get("DialCallStatus") in (
                        "completed", "answered"):
                    return _xml(twiml.document("<Hangup/>"))
                digits = params.get("Digits")
                return _xml(walk.step(node, digits=digits or None,
                                      attempt=_int(query.get("attempt"), 1),
                                      after=query.get("after")))
            binding = IvrNumber.objects.select_related("flow").filter(
                phone_number=params.get("To", "")).first()
            if binding is None or not binding.flow.active or not binding.flow.version:
                return _xml(twiml.out_of_service())
            published = IvrFlowVersion.objects.get(flow=binding.flow,
                                                   version=binding.flow.version)
            walk = twiml.Walk(definition=published.definition, base_url=call_url(organization),
                              flow_id=binding.flow_id, version=published.version)
            return _xml(walk.start())

    def _recording(self, organization, params) -> HttpResponse:
        url = params.get("RecordingUrl", "")
        if params.get("RecordingStatus", "completed") == "completed" and url.startswith(
                "https://"):
            from recordings import services as recordings

            recordings.recording_register_url(
                principal=None, organization=organization, media_url=url + ".wav",
                kind="call", call_sid=params.get("CallSid", "")[:128],
                duration_seconds=_int(params.get("RecordingDuration"), 0) or None,
                metadata={"source": "ivr_voicemail",
                          "recording_sid": params.get("RecordingSid", "")[:64]})
        return _xml(twiml.document(""))


def _xml(body: str) -> HttpResponse:
    return HttpResponse(body, content_type="text/xml")
