"""The SAML root routes of Document 1, 4.2 (`/auth/saml/{orgSlug}/…`) on djangosaml2.

Metadata, login and the Assertion Consumer Service are djangosaml2's views, subclassed
thinly: the SP configuration comes from `SAML_CONFIG_LOADER` (one SP per organization), the
outstanding-request cache answers InResponseTo, and the organization's backend provisions.

Browser-driven and unauthenticated (they begin or end a session). Failures answer the
JSON error envelope with the SAML codes of `error_codes.py`.
"""

from __future__ import annotations

from urllib.parse import urlencode

from django.http import HttpResponseRedirect, QueryDict
from djangosaml2.cache import OutstandingQueriesCache
from djangosaml2.views import AssertionConsumerServiceView, LoginView, MetadataView
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
from .backends import OrganizationSaml2Backend

_REDIRECT = OpenApiResponse(description="Redirect (Location header).")


class _SamlView(PublicAPIView):
    idempotent_posts = False
    ip_limit = RateLimit("saml", 120, 60, per="ip")

    def get_rate_limits(self, method: str) -> list[RateLimit]:
        return [self.ip_limit]


class _RequestSession(dict):
    """What djangosaml2's caches (OutstandingQueriesCache, IdentityCache) read and write in
    place of a Django cookie session. The IdP round trip carries no cookie of ours (the
    dashboard signs in with bearer tokens), so the store lives for one request and is seeded
    from the AuthnRequest row that the signed RelayState names."""

    modified = False


class SamlMetadataView(_SamlView, MetadataView):
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
        # Before the IdP is configured the SP alone is described (the admin imports it first).
        request.saml_organization = (org, services.saml_config_get_or_create(organization=org))
        response = MetadataView.get(self, request)
        # djangosaml2 answers text/xml; the metadata's registered media type is kept.
        response["Content-Type"] = "application/samlmetadata+xml; charset=utf-8"
        return response


class SamlLoginView(_SamlView, LoginView):
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
        org, config = services.saml_enabled_config(slug=slug)
        self._request_id, relay_state = services.saml_login_prepare(
            org=org, redirect=request.GET.get("redirect")
        )
        request.saml_organization = (org, config)
        request.saml_session = _RequestSession()
        # djangosaml2 relays the query's `RelayState` (after its same-site check); ours is
        # the signed one naming the recorded request, never the caller's raw value.
        query = request._request.GET.copy()
        query.pop("next", None)
        query["RelayState"] = relay_state
        request._request.GET = query
        return LoginView.get(self, request)

    def should_prevent_auth(self, request) -> bool:
        # Sessions are bearer tokens, not `request.user`: every visit starts a sign-in.
        return False

    def load_sso_kwargs(self, sso_kwargs: dict) -> None:
        # The AuthnRequest's ID is the one recorded (and signed into RelayState) above.
        sso_kwargs["message_id"] = self._request_id
        # djangosaml2 asks pysaml2 for its namespace prefixes, which pysaml2 registers in
        # ElementTree process-wide (changing how every other XML document of the worker
        # serializes); the AuthnRequest keeps pysaml2's defaults instead.
        sso_kwargs.pop("nsprefix", None)


class _CallbackSerializer(serializers.Serializer):
    SAMLResponse = serializers.CharField()  # noqa: N815 (the SAML binding's field name)
    RelayState = serializers.CharField(required=False, allow_blank=True)  # noqa: N815


class SamlCallbackView(_SamlView, AssertionConsumerServiceView):
    """djangosaml2's ACS (pysaml2 verification, its outstanding-request cache for
    InResponseTo), with our organization lookup, RelayState, backend and answers."""

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
        org, config = services.saml_enabled_config(slug=slug)
        pending = services.saml_pending_request(
            org=org, relay_state=request.data.get("RelayState", "")
        )
        saml_response = request.data.get("SAMLResponse", "")
        # pysaml2 verifies the assertion it picks; a second one anywhere in the document is
        # how signature wrapping smuggles in an unsigned assertion, so it is refused first.
        if saml.count_assertions(saml.decode_response(saml_response)) != 1:
            raise APIError(
                "SAML_SIGNATURE_INVALID", "The SAML response must carry exactly one assertion."
            )
        session = _RequestSession()
        if pending is not None:
            OutstandingQueriesCache(session).set(pending.request_id, pending.redirect)
        # djangosaml2 reads `request.POST`; the binding's fields are accepted as JSON too
        # (as before), so they are handed over as the form it expects.
        django_request = request._request
        form = QueryDict(mutable=True)
        form["SAMLResponse"] = saml_response
        form["RelayState"] = request.data.get("RelayState", "")
        django_request.POST = form
        django_request.saml_organization = (org, config)
        django_request.saml_session = session
        self._org, self._config, self._pending = org, config, pending
        self._failure: APIError | None = None
        self._assertion_id = ""
        self._sign_in: services.SamlSignIn | None = None
        return AssertionConsumerServiceView.post(self, django_request)

    def custom_validation(self, response) -> None:
        # Checks djangosaml2 leaves to the site; the refusal is kept for handle_acs_failure
        # because djangosaml2 replaces the exception by a generic one.
        idp = saml.describe_idp(self._config)
        failure = None
        if response.issuer() != idp.entity_id:
            failure = APIError("SAML_SIGNATURE_INVALID", "The response comes from another issuer.")
        elif len(response.assertions) != 1:
            failure = APIError(
                "SAML_SIGNATURE_INVALID", "The SAML response must carry exactly one assertion."
            )
        elif self._pending is None or response.in_response_to != self._pending.request_id:
            failure = APIError("SAML_UNSOLICITED_RESPONSE")
        elif response.name_id is None or not (response.name_id.text or "").strip():
            failure = APIError("SAML_RESPONSE_INVALID", "The assertion names no subject.")
        if failure is not None:
            self._failure = failure
            raise failure
        self._assertion_id = response.assertion.id or ""

    def handle_acs_failure(self, request, exception=None, status=403, **kwargs):
        # Our registered codes in the envelope, never djangosaml2's HTML error page.
        if self._failure is not None:
            raise self._failure
        if isinstance(exception, APIError):
            raise exception
        if exception is None or str(exception) == "Unknown SAML2 error":
            raise APIError(
                "SAML_RESPONSE_INVALID",
                "The SAML response is not addressed to this organization's sign-in.",
            )
        raise saml.classify(exception)

    def authenticate_user(
        self, request, session_info, attribute_mapping, create_unknown_user, assertion_info
    ):
        # djangosaml2 would `auth.login()` into a Django cookie session; the dashboard
        # instead trades a one-time ticket for a bearer session, so the organization's
        # backend is called directly and the ticket minted here.
        backend = OrganizationSaml2Backend(organization=self._org, pending=self._pending)
        user = backend.authenticate(
            request,
            session_info=session_info,
            attribute_mapping=attribute_mapping or {},
            create_unknown_user=False,
            assertion_info=assertion_info
            or {"assertion_id": self._assertion_id, "not_on_or_after": None},
        )
        name_id = session_info["name_id"]
        self._sign_in = services.saml_sign_in(
            org=self._org,
            pending=self._pending,
            user=user,
            membership=backend.membership,
            name_id=name_id.text.strip(),
            name_id_format=name_id.format or "",
            display_name=saml.display_name_of(session_info.get("ava") or {}),
            assertion_id=self._assertion_id,
            request=request,
        )
        return user

    def custom_redirect(self, user, relay_state: str, session_info) -> str:
        return f"{saml.dashboard_sso_url()}?{urlencode({'ticket': self._sign_in.ticket})}"


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
