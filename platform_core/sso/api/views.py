"""Settings routes of the SSO family (/api/v1/settings/saml, /settings/scim) and the
dashboard's sign-in ticket exchange (/api/v1/auth/sso/exchange)."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.response import Response

from platform_core.api.authentication import client_ip
from platform_core.api.ratelimit import RateLimit
from platform_core.api.views import PlatformAPIView, PublicAPIView
from platform_core.identity.api.serializers import session_result

from .. import selectors, services
from ..models import SamlConfig, ScimConfig
from . import serializers as s

ADMINS = {"owner", "admin"}


class SamlSettingsView(PlatformAPIView):
    """The organization's SAML identity provider. Owners change it; enabling runs the
    connection test (422 SAML_CONNECTION_TEST_FAILED)."""

    required_scopes = {"GET": "settings:read", "PATCH": "settings:write"}
    required_roles = {"GET": ADMINS, "PATCH": {"owner"}}

    @extend_schema(responses=s.SamlSettingsSerializer, tags=["settings"])
    def get(self, request):
        config = SamlConfig.objects.first()
        return Response(s.SamlSettingsSerializer(selectors.saml_settings(self.organization, config)).data)

    @extend_schema(
        request=s.SamlSettingsUpdateSerializer,
        responses=s.SamlSettingsSerializer,
        tags=["settings"],
    )
    def patch(self, request):
        body = s.SamlSettingsUpdateSerializer(data=request.data, partial=True)
        body.is_valid(raise_exception=True)
        config = services.saml_config_update(
            principal=self.principal, request=request, **body.validated_data
        )
        return Response(s.SamlSettingsSerializer(selectors.saml_settings(self.organization, config)).data)


class ScimSettingsView(PlatformAPIView):
    required_scopes = {"GET": "settings:read", "PATCH": "settings:write"}
    required_roles = {"GET": ADMINS, "PATCH": ADMINS}

    @extend_schema(responses=s.ScimSettingsSerializer, tags=["settings"])
    def get(self, request):
        config = ScimConfig.objects.first()
        return Response(s.ScimSettingsSerializer(selectors.scim_settings(self.organization, config)).data)

    @extend_schema(
        request=s.ScimSettingsUpdateSerializer,
        responses=s.ScimSettingsSerializer,
        tags=["settings"],
    )
    def patch(self, request):
        body = s.ScimSettingsUpdateSerializer(data=request.data, partial=True)
        body.is_valid(raise_exception=True)
        config = services.scim_config_update(
            principal=self.principal, request=request, **body.validated_data
        )
        return Response(s.ScimSettingsSerializer(selectors.scim_settings(self.organization, config)).data)


class ScimTokenView(PlatformAPIView):
    """A new SCIM bearer token, shown once; the previous token stops working at once."""

    required_scopes = {"POST": "settings:write"}
    required_roles = {"POST": ADMINS}
    idempotent_posts = False  # the answer holds a secret: never stored for replay

    @extend_schema(request=None, responses={201: s.ScimTokenSerializer}, tags=["settings"])
    def post(self, request):
        config, raw = services.scim_token_generate(principal=self.principal, request=request)
        payload = {
            "token": raw,
            "token_last4": config.token_last4,
            "token_created_at": config.token_created_at,
            "base_url": selectors.scim_base_url(self.organization),
        }
        return Response(s.ScimTokenSerializer(payload).data, status=status.HTTP_201_CREATED)


class SsoExchangeView(PublicAPIView):
    """Trade the one-time ticket of a SAML sign-in (GET /dashboard/sso?ticket=…) for a
    session token, exactly like /auth/login answers; plus the `redirect` to open."""

    rate_limits = {"POST": [RateLimit("sso_exchange", 30, 60, per="ip")]}
    idempotent_posts = False

    @extend_schema(
        request=s.SsoExchangeSerializer,
        responses=s.SsoExchangeResultSerializer,
        auth=[],
        tags=["auth"],
    )
    def post(self, request):
        body = s.SsoExchangeSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        session, token, redirect = services.sso_ticket_exchange(
            ticket=body.validated_data["ticket"],
            ip=client_ip(request),
            user_agent=request.META.get("HTTP_USER_AGENT", ""),
        )
        result = {**session_result(session, token), "redirect": redirect}
        return Response(s.SsoExchangeResultSerializer(result).data)
