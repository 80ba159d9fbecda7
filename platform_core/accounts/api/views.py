"""Account security endpoints of Document 1, 4.1 under /api/v1/auth.

forgot-password, reset-password, post-reset-revoke-api-keys and the three impersonation
routes take no credential (they carry their own one-time token) and are rate limited per
client address; /consent requires a signed-in session (API keys and impersonated sessions
are refused 403).

Decisions where the documents say "not shown":
- forgot-password answers 200 `{message}` for every well-formed address; the lookup and
  the email happen in a Celery task, so the request does identical work either way.
- post-reset-revoke-api-keys answers the JSON envelope `{revoked_count}`, or a small HTML
  page (same statuses) when the client prefers text/html, as a browser opening the link does.
- impersonate-exchange uses the token once and also answers a session JWT for the
  impersonated user (`session`), whose `imp` claim names the operator; the session lasts
  IMPERSONATION_SESSION_TTL_SECONDS (1 hour) and ends when the grant is ended.
- impersonate-cookie-consume redirects 302 to `DASHBOARD_URL#session=<session JWT>`
  (default PUBLIC_BASE_URL + /dashboard/); the fragment never reaches a server. The same
  answer sets the dashboard's session cookie, so the browser lands signed in. A second
  visit, or any unusable cookie, answers the 401 INVALID_IMPERSONATION_TOKEN envelope.
"""

from __future__ import annotations

import hashlib

from django.http import HttpResponse, HttpResponseRedirect
from django.template.loader import render_to_string
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.response import Response

from platform_core.api import ratelimit
from platform_core.api.authentication import client_ip
from platform_core.api.exceptions import error_response
from platform_core.api.ratelimit import RateLimit
from platform_core.api.views import PlatformAPIView, PublicAPIView
from platform_core.errors import APIError
from platform_core.identity import dashboard_cookie

from .. import conf, services
from ..models import ConsentRecord
from ..tasks import send_password_reset
from . import serializers as s

FORGOT_MESSAGE = (
    "If an account exists for this address, we have emailed it a link to reset the password. "
    "The link is valid for 1 hour."
)


def _user_agent(request) -> str:
    return request.META.get("HTTP_USER_AGENT", "")


class _RateLimitedPublicView(PublicAPIView):
    """A public route with a per-address limit: `ip_limit = (count, window_seconds)`."""

    idempotent_posts = False
    limit_name = "account_token"

    def ip_limit(self) -> tuple[int, int]:
        return conf.public_auth_ip_limit()

    def get_rate_limits(self, method: str) -> list[RateLimit]:
        count, window = self.ip_limit()
        return [RateLimit(self.limit_name, count, window, per="ip")]


class ForgotPasswordView(_RateLimitedPublicView):
    """Always 200 with the same body, known address or not; limited per IP and per address.
    A one-hour single-use link is emailed only when the address is an active account's."""

    limit_name = "forgot_password_ip"

    def ip_limit(self) -> tuple[int, int]:
        return conf.forgot_password_limits()[0]

    @extend_schema(request=s.ForgotPasswordSerializer, responses=s.ForgotPasswordResultSerializer, auth=[],
                   summary="Start a password reset (no enumeration)")
    def post(self, request):
        body = s.ForgotPasswordSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        email = services.normalize_email(body.validated_data["email"])
        count, window = conf.forgot_password_limits()[1]
        email_id = hashlib.sha256(email.encode()).hexdigest()
        self._rate_state = ratelimit.enforce(
            [RateLimit("forgot_password_email", count, window, per="email")], {"email": email_id}
        )
        # Known or not, the request does the same thing: hand the address to the worker,
        # which looks it up and emails a link only to an account.
        send_password_reset.delay(email, client_ip(request))
        return Response({"message": FORGOT_MESSAGE})


class ResetPasswordView(_RateLimitedPublicView):
    """Set a new password with the emailed token (policy: Django's password validators).
    Signs the account out of every session, emails an offer to revoke its API keys and
    burns the token. A bad, used or expired token answers 400 INVALID_RESET_TOKEN."""

    limit_name = "reset_password_ip"

    @extend_schema(request=s.ResetPasswordSerializer, responses=s.ResetPasswordResultSerializer,
                   auth=[], summary="Set a new password with an emailed reset token")
    def post(self, request):
        body = s.ResetPasswordSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        result = services.password_reset_complete(
            token=body.validated_data["token"],
            password=body.validated_data["password"],
            ip=client_ip(request),
            user_agent=_user_agent(request),
        )
        return Response({"password_reset": True, "sessions_revoked": result.sessions_revoked})


def _wants_html(request) -> bool:
    """A browser opening the emailed link asks for text/html before JSON."""
    accept = request.META.get("HTTP_ACCEPT", "")
    html, json = accept.find("text/html"), accept.find("application/json")
    return html != -1 and (json == -1 or html < json)


class RevokeAPIKeysView(_RateLimitedPublicView):
    """Opened from the email sent after a password reset. Answers the JSON envelope, or a
    small HTML page when the client prefers text/html (a browser)."""

    limit_name = "revoke_keys_ip"

    @extend_schema(
        parameters=[OpenApiParameter("token", str, required=True,
                                     description="The single-use token from the email.")],
        responses=s.RevokeAPIKeysResultSerializer, auth=[],
        summary="Revoke every API key the user created (emailed link)",
    )
    def get(self, request):
        token = request.query_params.get("token", "")
        try:
            count = services.api_keys_revoke_by_link(token=token)
        except APIError as exc:
            if _wants_html(request):
                return self._page(request, ok=False, error=exc, status_code=exc.status)
            raise
        if _wants_html(request):
            return self._page(request, ok=True, count=count, status_code=200)
        return Response({"revoked_count": count})

    def _page(self, request, *, ok: bool, status_code: int, count: int = 0,
              error: APIError | None = None) -> HttpResponse:
        html = render_to_string("accounts/revoke_api_keys_result.html",
                                {"ok": ok, "count": count, "error": error}, request=request)
        response = HttpResponse(html, status=status_code, content_type="text/html; charset=utf-8")
        response["Cache-Control"] = "no-store"
        response["Referrer-Policy"] = "no-referrer"
        return response


class ConsentView(PlatformAPIView):
    """The signed-in person's acceptance of the terms of service and privacy policy."""

    required_scopes = {"GET": None, "POST": None}

    def check_permissions(self, request):
        super().check_permissions(request)
        principal = self.principal
        if principal.kind != "session" or not principal.user_id:
            raise APIError("INSUFFICIENT_PERMISSIONS",
                           "Consent is given by a signed-in person; use a session token.")
        if principal.impersonator_id and request.method == "POST":
            raise APIError("INSUFFICIENT_PERMISSIONS",
                           "An operator acting as a user cannot accept documents for them.")

    @extend_schema(responses=s.TermsConsentRecordSerializer, auth=[{"BearerAuth": []}],
                   summary="The caller's consent record")
    def get(self, request):
        record = ConsentRecord.objects.filter(user_id=self.principal.user_id).first()
        if record is None:
            raise APIError("NOT_FOUND", "You have not accepted the documents yet.")
        return Response(s.TermsConsentRecordSerializer(record).data)

    @extend_schema(request=s.TermsConsentSerializer,
                   responses={200: s.TermsConsentRecordSerializer, 201: s.TermsConsentRecordSerializer},
                   auth=[{"BearerAuth": []}], summary="Record acceptance of the terms and privacy policy")
    def post(self, request):
        body = s.TermsConsentSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        locale = data.get("locale") or _first_language(request)
        record, created = services.consent_record(
            principal=self.principal,
            terms_version=data["terms_version"],
            privacy_version=data["privacy_version"],
            locale=locale,
            ip=client_ip(request),
            user_agent=_user_agent(request),
            request=request,
        )
        return Response(s.TermsConsentRecordSerializer(record).data,
                        status=status.HTTP_201_CREATED if created else status.HTTP_200_OK)


def _first_language(request) -> str:
    header = request.META.get("HTTP_ACCEPT_LANGUAGE", "")
    first = header.split(",")[0].split(";")[0].strip()
    return first[:35] if first and first != "*" else ""


# --- Impersonation ---------------------------------------------------------------------------


def _exchange_payload(result: services.ImpersonationSession) -> dict:
    grant = result.grant
    return {
        "grant_id": grant.pk,
        "operator": {"id": grant.operator_id, "email": grant.operator_email},
        "organization": {"id": grant.organization.pk, "slug": grant.organization.slug,
                         "name": grant.organization.name},
        "user": {"id": grant.user.pk, "email": grant.user.email, "name": grant.user.name},
        "reason": grant.reason,
        "expires_at": grant.expires_at,
        "session": {"token": result.token, "session_id": result.session.pk,
                    "expires_at": result.session.expires_at},
    }


class ImpersonateExchangeView(_RateLimitedPublicView):
    """Use an impersonation token once: answers the grant (operator, organization, reason,
    expiry) and a session JWT for the impersonated user that records the operator.
    Expired, ended, replayed and forged tokens all answer the same 401."""

    limit_name = "impersonation_ip"

    @extend_schema(
        request=s.ImpersonationTokenSerializer,
        responses=s.ImpersonationExchangeResultSerializer, auth=[],
        summary="Exchange an impersonation token for the grant and an impersonated session",
    )
    def post(self, request):
        body = s.ImpersonationTokenSerializer(data=request.data)
        if not body.is_valid():  # a malformed token is refused like any other bad one
            raise services.impersonation_refused()
        result = services.impersonation_exchange(
            token=body.validated_data["token"], via="exchange", ip=client_ip(request),
            user_agent=_user_agent(request), request=request,
        )
        return Response(s.ImpersonationExchangeResultSerializer(_exchange_payload(result)).data)


def _clear_cookie(response) -> None:
    # With the attributes it was set with: browsers let only a Secure cookie replace one.
    response.set_cookie(conf.IMPERSONATION_COOKIE_NAME, "", max_age=0,
                        expires="Thu, 01 Jan 1970 00:00:00 GMT",
                        path=conf.IMPERSONATION_COOKIE_PATH, secure=True, httponly=True,
                        samesite="Strict")


class ImpersonateCookieSetView(_RateLimitedPublicView):
    """Verify a token (without using it) and keep it in a 5-minute httpOnly, Secure,
    SameSite=Strict cookie scoped to /api/v1/auth/. Answers 204 with no body."""

    limit_name = "impersonation_ip"

    @extend_schema(request=s.ImpersonationTokenSerializer, responses={204: None}, auth=[],
                   summary="Keep a verified impersonation token in a 5-minute cookie")
    def post(self, request):
        body = s.ImpersonationTokenSerializer(data=request.data)
        if not body.is_valid():
            raise services.impersonation_refused()
        token = body.validated_data["token"]
        services.impersonation_verify(token=token, request=request)
        response = Response(status=status.HTTP_204_NO_CONTENT)
        response.set_cookie(
            conf.IMPERSONATION_COOKIE_NAME, token,
            max_age=conf.IMPERSONATION_COOKIE_MAX_AGE,
            path=conf.IMPERSONATION_COOKIE_PATH,
            secure=True, httponly=True, samesite="Strict",
        )
        response["Cache-Control"] = "no-store"
        return response


class ImpersonateCookieConsumeView(_RateLimitedPublicView):
    """Redirects (302) into the impersonated dashboard with the session in the URL fragment.
    Without a usable cookie (a second visit, expired, ended) it answers the 401 envelope."""

    limit_name = "impersonation_ip"

    @extend_schema(
        responses={302: OpenApiResponse(description="To DASHBOARD_URL#session=<session JWT>"),
                   401: OpenApiResponse(description="INVALID_IMPERSONATION_TOKEN")},
        auth=[], summary="Use the impersonation cookie once and enter the dashboard",
    )
    def get(self, request):
        token = request.COOKIES.get(conf.IMPERSONATION_COOKIE_NAME, "")
        try:
            if not token:
                raise services.impersonation_refused()
            result = services.impersonation_exchange(
                token=token, via="cookie", ip=client_ip(request),
                user_agent=_user_agent(request), request=request,
            )
        except APIError as exc:
            response = error_response(request, exc)
            _clear_cookie(response)
            return response
        response = HttpResponseRedirect(conf.impersonated_dashboard_url(result.token))
        _clear_cookie(response)
        # The dashboard signs in with its own cookie; the fragment stays for API clients.
        dashboard_cookie.set_session_cookie(response, result.token)
        response["Cache-Control"] = "no-store"
        response["Referrer-Policy"] = "no-referrer"
        return response
