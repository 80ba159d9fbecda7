"""Template endpoints (Document 2, 4.3; 0-conventions.md section 6)."""

from __future__ import annotations

import json
import re

from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import mixins, status
from rest_framework.decorators import action
from rest_framework.response import Response

from platform_core.api.views import PlatformAPIView, PublicAPIView, TenantViewSet
from platform_core.errors import APIError, validation_error
from platform_core.tenancy.context import tenant_context
from templates import analytics, inbound, selectors, services
from templates.models import ContentTemplate, MessageTemplate

from . import serializers as s

READ, WRITE = "templates:read", "templates:write"

_LIST_FILTERS = [
    OpenApiParameter("search", OpenApiTypes.STR, description="Text in the name or the body."),
    OpenApiParameter("channel", OpenApiTypes.STR, many=True,
                     description="whatsapp, rcs, sms, mms, email; comma list or repeats."),
    OpenApiParameter("status", OpenApiTypes.STR, many=True,
                     description="pending, approved, rejected, paused, disabled."),
    OpenApiParameter("waba_id", OpenApiTypes.STR, description="WhatsApp Business Account id."),
    OpenApiParameter("language", OpenApiTypes.STR, description="Exact locale code."),
    OpenApiParameter("name", OpenApiTypes.STR, description="Exact template name."),
]


def _updates(serializer) -> dict:
    return {k: v for k, v in serializer.validated_data.items() if k in serializer.initial_data}


class _TemplateReads(mixins.ListModelMixin, mixins.RetrieveModelMixin, TenantViewSet):
    model = MessageTemplate
    serializer_class = s.TemplateSerializer

    def scope_queryset(self, queryset):
        if self.action == "list":
            queryset = selectors.templates_filtered(queryset, self.request.query_params)
        return queryset

    @extend_schema(parameters=_LIST_FILTERS)
    def list(self, request, *args, **kwargs):
        return super().list(request, *args, **kwargs)

    @extend_schema(
        responses={200: s.AnalyticsSerializer},
        description="Template analytics (Document 2, 2.3): totals, rates (two decimals), "
                    "per-campaign rows and `degraded`. 404 when the id is not in the tenant.")
    @action(detail=True, methods=["get"])
    def analytics(self, request, pk=None):
        return Response(analytics.template_analytics(self.get_object()))


class TemplateViewSet(_TemplateReads):
    """Message templates and their per-locale variants."""

    required_scopes = {"GET": READ, "POST": WRITE, "PATCH": WRITE, "DELETE": WRITE,
                       "localize": WRITE}

    @extend_schema(request=s.TemplateWriteSerializer, responses={201: s.TemplateSerializer})
    def create(self, request):
        body = s.TemplateWriteSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        template = services.template_create(principal=self.principal, request=request,
                                            **body.validated_data)
        return Response(s.TemplateSerializer(template).data, status=status.HTTP_201_CREATED)

    @extend_schema(request=s.TemplateUpdateSerializer, responses=s.TemplateSerializer)
    def partial_update(self, request, pk=None):
        template = self.get_object()
        body = s.TemplateUpdateSerializer(data=request.data, partial=True)
        body.is_valid(raise_exception=True)
        template = services.template_update(principal=self.principal, template=template,
                                            request=request, **_updates(body))
        return Response(s.TemplateSerializer(template).data)

    @extend_schema(responses={204: None})
    def destroy(self, request, pk=None):
        services.template_delete(principal=self.principal, template=self.get_object(),
                                 request=request)
        return Response(status=status.HTTP_204_NO_CONTENT)

    @extend_schema(responses=s.SummarySerializer,
                   description="Template counts per channel and status.")
    @action(detail=False, methods=["get"])
    def summary(self, request):
        return Response(selectors.template_summary(self.organization))

    @extend_schema(
        request=s.LocalizeSerializer,
        responses={201: s.LocalizeResultSerializer, 200: s.LocalizeResultSerializer},
        description="Translate body, header, footer and button labels into up to 25 locales "
                    "and create one variant per locale through the approval path. 201 when "
                    "a variant was created, else 200 (all existing or failed).")
    @action(detail=True, methods=["post"])
    def localize(self, request, pk=None):
        template = self.get_object()
        body = s.LocalizeSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        rows, created = services.template_localize(
            principal=self.principal, template=template,
            locales=body.validated_data["locales"], request=request)
        return Response(
            {"template_id": template.pk, "name": template.name, "channel": template.channel,
             "source_language": template.language, "localizations": rows},
            status=status.HTTP_201_CREATED if created else status.HTTP_200_OK)

    @extend_schema(responses=s.LocalizationsSerializer,
                   description="Every locale variant of this (channel, name) and its status.")
    @action(detail=True, methods=["get"])
    def localizations(self, request, pk=None):
        return Response(selectors.template_localizations(self.get_object()))


class TemplateAliasViewSet(_TemplateReads):
    """`/api/v1/templates`: the read-only search alias (same filters, same scope)."""

    required_scopes = {"GET": READ}


class SandboxDecisionView(PlatformAPIView):
    """Test mode: the carrier's decision on a pending template (test keys only)."""

    required_scopes = {"POST": WRITE}
    test_mode_only = True  # in live mode the carrier decides

    @extend_schema(request=s.DecisionSerializer, responses=s.TemplateSerializer,
                   description="Test keys only (a live key: 403 TEST_MODE_ONLY). Only a "
                               "pending template can be decided (else 409 CONFLICT). Emits "
                               "`template.approved` or `template.rejected`.")
    def post(self, request, pk: str):
        template = MessageTemplate.objects.filter(pk=pk).first()
        if template is None:
            raise APIError("NOT_FOUND")
        body = s.DecisionSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        template = services.template_sandbox_decide(
            principal=self.principal, template=template,
            decision=body.validated_data["decision"],
            reason=body.validated_data.get("reason"), request=request)
        return Response(s.TemplateSerializer(template).data)


class WhatsAppTemplateWebhookView(PublicAPIView):
    """Template status updates from the WhatsApp Cloud API (Meta webhook, live mode)."""

    idempotent_posts = False

    @extend_schema(
        auth=[],
        parameters=[
            OpenApiParameter("hub.mode", OpenApiTypes.STR, OpenApiParameter.QUERY),
            OpenApiParameter("hub.verify_token", OpenApiTypes.STR, OpenApiParameter.QUERY),
            OpenApiParameter("hub.challenge", OpenApiTypes.STR, OpenApiParameter.QUERY),
        ],
        responses={(200, "text/plain"): OpenApiResponse(OpenApiTypes.STR,
                                                        description="The challenge.")},
        description="Meta's subscription handshake: answers `hub.challenge` when "
                    "`hub.verify_token` is the account's verify_token.")
    def get(self, request, org_slug: str):
        organization = inbound.organization_for_slug(org_slug)
        with tenant_context(organization):
            account = inbound.whatsapp_account(organization)
            params = request.query_params
            if params.get("hub.mode") != "subscribe" or not inbound.verify_token(
                    account, params.get("hub.verify_token")):
                raise APIError("WEBHOOK_VERIFICATION_FAILED")
        return HttpResponse(params.get("hub.challenge", ""), content_type="text/plain")

    @extend_schema(
        auth=[], request=OpenApiTypes.OBJECT, responses=s.InboundResultSerializer,
        description="`message_template_status_update` changes, signed with "
                    "X-Hub-Signature-256 (HMAC-SHA256 of the raw body with the app secret).")
    def post(self, request, org_slug: str):
        organization = inbound.organization_for_slug(org_slug)
        raw = request.body
        with tenant_context(organization):
            account = inbound.whatsapp_account(organization)
            inbound.verify_signature(account, raw, request.headers.get("X-Hub-Signature-256"))
            received, applied = inbound.apply_whatsapp_updates(organization=organization,
                                                               raw_body=raw)
        return Response({"received": received, "applied": applied})


# --- Content templates ------------------------------------------------------------------

_VAR_PARAM = re.compile(r"^variables(?:\[(\d+)\]|\.(\d+))$")


def _query_variables(params) -> dict | None:
    """`variables` as a JSON object, or `variables[1]=..` / `variables.1=..` pairs."""
    raw = params.get("variables")
    if raw:
        try:
            value = json.loads(raw)
        except ValueError:
            raise validation_error("variables", "variables is a JSON object.", status=400
                                   ) from None
        if not isinstance(value, dict):
            raise validation_error("variables", "variables is a JSON object.", status=400)
        return value
    pairs = {}
    for key in params:
        match = _VAR_PARAM.match(key)
        if match:
            pairs[match.group(1) or match.group(2)] = params.get(key)
    return pairs or None


def _render_payload(rendered: services.RenderedContent) -> dict:
    template = None
    if rendered.template_id:
        template = {"id": rendered.template_id, "name": rendered.template_name,
                    "language": rendered.language, "status": rendered.template_status}
    return {
        "content_template_id": rendered.content_template_id,
        "channel": rendered.channel,
        "resolved_channel": rendered.resolved_channel,
        "fallback_used": rendered.fallback_used,
        "body": rendered.body,
        "subject": rendered.subject or None,
        "html": rendered.html or None,
        "media_urls": rendered.media_urls,
        "components": rendered.components,
        "rich_card": rendered.rich_card,
        "suggestions": rendered.suggestions,
        "template": template,
        "fallback": rendered.fallback,
    }


class ContentTemplateViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, TenantViewSet):
    """Channel-agnostic templates: per-channel variants and a fallback chain."""

    model = ContentTemplate
    serializer_class = s.ContentTemplateSerializer
    required_scopes = {"GET": READ, "POST": WRITE, "PATCH": WRITE, "DELETE": WRITE,
                       "render": READ}

    @extend_schema(request=s.ContentTemplateWriteSerializer,
                   responses={201: s.ContentTemplateSerializer})
    def create(self, request):
        body = s.ContentTemplateWriteSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        template = services.content_template_create(principal=self.principal, request=request,
                                                    **body.validated_data)
        return Response(s.ContentTemplateSerializer(template).data,
                        status=status.HTTP_201_CREATED)

    @extend_schema(request=s.ContentTemplateUpdateSerializer,
                   responses=s.ContentTemplateSerializer)
    def partial_update(self, request, pk=None):
        template = self.get_object()
        body = s.ContentTemplateUpdateSerializer(data=request.data, partial=True)
        body.is_valid(raise_exception=True)
        template = services.content_template_update(principal=self.principal, template=template,
                                                    request=request, **_updates(body))
        return Response(s.ContentTemplateSerializer(template).data)

    @extend_schema(responses={204: None})
    def destroy(self, request, pk=None):
        services.content_template_delete(principal=self.principal, template=self.get_object(),
                                         request=request)
        return Response(status=status.HTTP_204_NO_CONTENT)

    @extend_schema(
        methods=["GET"],
        parameters=[
            OpenApiParameter("channel", OpenApiTypes.STR, required=True,
                             description="Target channel."),
            OpenApiParameter("variables", OpenApiTypes.STR,
                             description="JSON object keyed \"1\", \"2\"...; or give "
                                         "`variables[1]=...` pairs."),
        ],
        responses=s.RenderResultSerializer,
        description="Preview for a channel, nothing is sent. The target's own variant, else "
                    "the first variant of the fallback chain with a plain body; none: 422 "
                    "NO_VARIANT_FOR_CHANNEL.")
    @extend_schema(methods=["POST"], request=s.RenderRequestSerializer,
                   responses=s.RenderResultSerializer,
                   description="The same preview with a JSON body {channel, variables}.")
    @action(detail=True, methods=["get", "post"])
    def render(self, request, pk=None):
        template = self.get_object()
        if request.method == "GET":
            data = {"channel": request.query_params.get("channel"),
                    "variables": _query_variables(request.query_params)}
        else:
            data = request.data
        body = s.RenderRequestSerializer(data=data)
        body.is_valid(raise_exception=True)
        rendered = services.render_content(template, channel=body.validated_data["channel"],
                                           variables=body.validated_data.get("variables"),
                                           require_approved=False)
        return Response(_render_payload(rendered))
