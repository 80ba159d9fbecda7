"""The SAML root routes of Document 1, 4.2 (`/auth/saml/{orgSlug}/…`).

Browser-driven and unauthenticated (they begin or end a session). Failures answer the
JSON error envelope with the SAML codes of `error_codes.py`.
"""

from __future__ import annotations

from urllib.parse import urlencode

from django.http import HttpResponse, HttpResponseRedirect
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.response import Response

from platform_core.api.ratelimit import RateLimit
from platform_core.api.views import PublicAPIView
from platform_core.errors import APIError
from platform_core.identity import credentials
from platform_core.tenancy.models import Organization

from . import saml, services

_REDIRECT = OpenApiResponse(description="Redirect (Location header).")


class _SamlView(PublicAPIView):
    idempotent_posts = False
    ip_limit = RateLimit("saml", 120, 60, per="ip")

    def get_rate_limits(self, method: str) -> list[RateLimit]:
        return [self.ip_limit]


class SamlMetadataView(_SamlView):
    @extend_schema(
        operation_id="saml_metadata",
        tags=["saml"],
        auth=[],
        responses={(200, "application/samlmetadata+xml"): OpenApiTypes.STR},
        description="Service-provider metadata XML (entity id, assertion consumer URL, "
        "signing certificate) to import into the identity provider.",
    )
    def get(self, request, slug: str):
        org = Organization.objects.filter(slug=slug, is_active=True).first()
        if org is None:
            raise APIError("SAML_NOT_ENABLED")
        config = services.saml_config_get_or_create(organization=org)
        if not (config.idp_metadata_xml or config.idp_x509_cert):
            # Not configured yet: describe the SP alone (the admin imports it first).
            xml = _sp_only_metadata(org.slug, config.sp_certificate)
        else:
            xml = saml.sp_metadata_xml(config, org.slug)
        return HttpResponse(xml, content_type="application/samlmetadata+xml; charset=utf-8")


def _sp_only_metadata(slug: str, certificate: str) -> str:
    from xml.sax.saxutils import escape, quoteattr

    urls = saml.sp_urls(slug)
    body = saml.certificate_body(certificate)
    return (
        '<?xml version="1.0" encoding="UTF-8"?>'
        f'<md:EntityDescriptor xmlns:md="{saml.MD_NS}" xmlns:ds="{saml.DS_NS}" '
        f"entityID={quoteattr(urls.entity_id)}>"
        f'<md:SPSSODescriptor AuthnRequestsSigned="true" WantAssertionsSigned="false" '
        f'protocolSupportEnumeration="{saml.SAMLP_NS}">'
        f'<md:KeyDescriptor use="signing"><ds:KeyInfo><ds:X509Data><ds:X509Certificate>'
        f"{escape(body)}</ds:X509Certificate></ds:X509Data></ds:KeyInfo></md:KeyDescriptor>"
        f'<md:SingleLogoutService Binding="{saml.BINDING_REDIRECT}" '
        f"Location={quoteattr(urls.slo_url)}/>"
        f"<md:NameIDFormat>{saml.NAMEID_EMAIL}</md:NameIDFormat>"
        f'<md:AssertionConsumerService Binding="{saml.BINDING_POST}" '
        f'Location={quoteattr(urls.acs_url)} index="1"/>'
        "</md:SPSSODescriptor></md:EntityDescriptor>"
    )


class SamlLoginView(_SamlView):
    @extend_schema(
        operation_id="saml_login",
        tags=["saml"],
        auth=[],
        parameters=[
            OpenApiParameter(
                "redirect",
                str,
                description="Same-site path to open after sign-in (signed into RelayState).",
            )
        ],
        responses={302: _REDIRECT},
        description="Issues the AuthnRequest and redirects to the identity provider.",
    )
    def get(self, request, slug: str):
        location = services.saml_login_start(slug=slug, redirect=request.GET.get("redirect"))
        return HttpResponseRedirect(location)


class _CallbackSerializer(serializers.Serializer):
    SAMLResponse = serializers.CharField()  # noqa: N815 (the SAML binding's field name)
    RelayState = serializers.CharField(required=False, allow_blank=True)  # noqa: N815


class SamlCallbackView(_SamlView):
    @extend_schema(
        operation_id="saml_callback",
        tags=["saml"],
        auth=[],
        request={"application/x-www-form-urlencoded": _CallbackSerializer},
        responses={302: _REDIRECT},
        description="Assertion Consumer Service (HTTP-POST binding). On success redirects to "
        "the dashboard with a one-time `ticket`, exchanged at "
        "POST /api/v1/auth/sso/exchange.",
    )
    def post(self, request, slug: str):
        result = services.saml_callback(
            slug=slug,
            saml_response=request.data.get("SAMLResponse", ""),
            relay_state=request.data.get("RelayState", ""),
            request=request,
        )
        return HttpResponseRedirect(
            f"{saml.dashboard_sso_url()}?{urlencode({'ticket': result.ticket})}"
        )


class _LogoutSerializer(serializers.Serializer):
    status = serializers.CharField()


class SamlLogoutView(_SamlView):
    @extend_schema(
        operation_id="saml_logout",
        tags=["saml"],
        auth=[],
        parameters=[
            OpenApiParameter(
                "nameId",
                str,
                description="NameID to sign out at the identity provider (default: the caller's).",
            )
        ],
        responses={200: _LogoutSerializer, 302: _REDIRECT},
        description="Ends the session presented as `Authorization: Bearer`, then redirects a "
        "LogoutRequest to the IdP's single-logout URL when it has one; otherwise "
        "answers `{status: logged_out}`.",
    )
    def get(self, request, slug: str):
        if "SAMLResponse" in request.GET:  # the IdP answering our LogoutRequest
            services.saml_organization(slug=slug)
            return Response({"status": "logged_out"})
        location = services.saml_logout(
            slug=slug,
            name_id=(request.GET.get("nameId") or "").strip() or None,
            session_principal=_session_principal(request),
        )
        if location:
            return HttpResponseRedirect(location)
        return Response({"status": "logged_out"})


def _session_principal(request):
    scheme, _, token = request.META.get("HTTP_AUTHORIZATION", "").partition(" ")
    if scheme.lower() != "bearer" or not token.strip().startswith("eyJ"):
        return None
    try:
        return credentials.principal_for_session_token(token.strip())
    except APIError:
        return None
