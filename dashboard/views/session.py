"""Signing in and out of the dashboard: password, SSO ticket, impersonation, switching
organization, consent and password reset. Each calls the identity, accounts and SSO
services the API calls; this module only moves their answers into the cookie and pages.

Session fixation: every sign-in mints a new server-side session and a new cookie, ends the
session the browser presented before (whoever's it was), and rotates the CSRF token.
"""

from __future__ import annotations

from urllib.parse import quote, urlencode

from django.conf import settings
from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.middleware.csrf import rotate_token
from django.shortcuts import redirect, render
from django.views import View

from platform_core.accounts import services as account_services
from platform_core.accounts.tasks import send_password_reset
from platform_core.api import ratelimit
from platform_core.api.authentication import client_ip
from platform_core.api.ratelimit import RateLimit
from platform_core.errors import APIError
from platform_core.identity import credentials, dashboard_cookie
from platform_core.identity import services as identity_services
from platform_core.identity.models import UserSession
from platform_core.sso import services as sso_services

from .base import DashboardView, safe_next

_PUBLIC_LIMIT = [RateLimit("dashboard_auth", 30, 60, per="ip")]


def _user_agent(request: HttpRequest) -> str:
    return request.META.get("HTTP_USER_AGENT", "")


def _limit(request: HttpRequest) -> None:
    ratelimit.enforce(_PUBLIC_LIMIT, {"ip": client_ip(request) or "unknown"})


def _end_presented_session(request: HttpRequest) -> None:
    """End whatever session the browser's cookie named before this sign-in."""
    token = dashboard_cookie.token_from_request(request)
    if not token:
        return
    try:
        principal = credentials.principal_for_session_token(token)
    except APIError:
        return
    session = UserSession.objects.dangerously_unscoped().filter(pk=principal.session_id).first()
    if session is not None:
        identity_services.session_revoke(session=session)


def signed_in(request: HttpRequest, token: str, target: str) -> HttpResponse:
    """The answer of every successful sign-in: new cookie, new CSRF token, on to `target`."""
    _end_presented_session(request)
    rotate_token(request)
    response = redirect(target)
    dashboard_cookie.set_session_cookie(response, token)
    response["Cache-Control"] = "no-store"
    return response


class SignInView(View):
    template_name = "dashboard/signin.html"

    def get(self, request: HttpRequest) -> HttpResponse:
        return render(request, self.template_name, {"next": safe_next(request.GET.get("next"))})

    def post(self, request: HttpRequest) -> HttpResponse:
        target = safe_next(request.POST.get("next"))
        email = request.POST.get("email", "")
        try:
            _limit(request)
            _session, token = identity_services.session_login(
                email=email,
                password=request.POST.get("password", ""),
                organization_slug=request.POST.get("organization", "").strip() or None,
                ip=client_ip(request),
                user_agent=_user_agent(request),
            )
        except APIError as error:
            return render(request, self.template_name,
                          {"next": target, "email": email, "error": error},
                          status=error.status)
        return signed_in(request, token, target)


class SsoStartView(View):
    """"Sign in with SSO": the organization's SAML login, which comes back to SsoLandingView."""

    def get(self, request: HttpRequest) -> HttpResponse:
        slug = request.GET.get("organization", "").strip()
        if not slug or not slug.replace("-", "").replace("_", "").isalnum():
            return render(request, "dashboard/signin.html",
                          {"sso_error": "Enter your organization's slug.", "next": "/dashboard/"},
                          status=422)
        target = safe_next(request.GET.get("next"))
        try:
            sso_services.saml_enabled_config(slug=slug)
        except APIError as error:  # shown here rather than as the login route's JSON
            return render(request, "dashboard/signin.html",
                          {"sso_error": error.message, "sso_error_code": error.code,
                           "next": target}, status=error.status)
        return redirect(f"/auth/saml/{quote(slug)}/login?{urlencode({'redirect': target})}")


class SsoLandingView(View):
    """The SAML callback's target: trades the one-time ticket for the session cookie."""

    def get(self, request: HttpRequest) -> HttpResponse:
        try:
            _limit(request)
            _session, token, target = sso_services.sso_ticket_exchange(
                ticket=request.GET.get("ticket", ""), ip=client_ip(request),
                user_agent=_user_agent(request))
        except APIError as error:
            return render(request, "dashboard/signin.html",
                          {"error": error, "next": "/dashboard/"}, status=error.status)
        return signed_in(request, token, safe_next(target))


class SignOutView(DashboardView):
    required_scopes = {"POST": None}
    skip_consent = True

    def post(self, request: HttpRequest) -> HttpResponse:
        session = UserSession.objects.filter(pk=self.principal.session_id).first()
        if session is not None:
            identity_services.session_revoke(session=session, principal=self.principal,
                                             request=request)
        response = redirect("/dashboard/signin")
        dashboard_cookie.clear_session_cookie(response)
        return response


class SwitchOrganizationView(DashboardView):
    required_scopes = {"POST": None}

    def post(self, request: HttpRequest) -> HttpResponse:
        _session, token = identity_services.session_switch_organization(
            principal=self.principal, organization_slug=request.POST.get("organization", ""),
            ip=client_ip(request), user_agent=_user_agent(request))
        response = redirect("/dashboard/")
        dashboard_cookie.set_session_cookie(response, token)
        return response


class ConsentView(DashboardView):
    required_scopes = {"GET": None, "POST": None}
    skip_consent = True

    def get(self, request: HttpRequest) -> HttpResponse:
        return render(request, "dashboard/consent.html", {
            "next": safe_next(request.GET.get("next")),
            "terms_version": settings.DASHBOARD_TERMS_VERSION,
            "privacy_version": settings.DASHBOARD_PRIVACY_VERSION,
        })

    def post(self, request: HttpRequest) -> HttpResponse:
        if request.POST.get("accept") != "yes":
            messages.error(request, "Accept the terms and the privacy policy to go on.")
            return redirect(request.get_full_path())
        account_services.consent_record(
            principal=self.principal,
            terms_version=settings.DASHBOARD_TERMS_VERSION,
            privacy_version=settings.DASHBOARD_PRIVACY_VERSION,
            locale=(request.LANGUAGE_CODE if hasattr(request, "LANGUAGE_CODE") else "en")[:16],
            ip=client_ip(request), user_agent=_user_agent(request), request=request)
        return redirect(safe_next(request.POST.get("next")))


class ForgotPasswordView(View):
    def get(self, request: HttpRequest) -> HttpResponse:
        return render(request, "dashboard/forgot_password.html")

    def post(self, request: HttpRequest) -> HttpResponse:
        try:
            _limit(request)
        except APIError as error:
            return render(request, "dashboard/forgot_password.html", {"error": error},
                          status=error.status)
        email = account_services.normalize_email(request.POST.get("email", ""))
        if email:
            # Same answer for every address; the lookup and the email happen in the task.
            send_password_reset.delay(email, client_ip(request))
        return render(request, "dashboard/forgot_password.html", {"sent": True})


class ResetPasswordView(View):
    """The page the reset email links to (`/dashboard/reset-password?token=`)."""

    def get(self, request: HttpRequest) -> HttpResponse:
        return render(request, "dashboard/reset_password.html",
                      {"token": request.GET.get("token", "")})

    def post(self, request: HttpRequest) -> HttpResponse:
        token = request.POST.get("token", "")
        try:
            _limit(request)
            if request.POST.get("password") != request.POST.get("password_again"):
                raise APIError("VALIDATION_ERROR", "The two passwords differ.")
            account_services.password_reset_complete(
                token=token, password=request.POST.get("password", ""),
                ip=client_ip(request), user_agent=_user_agent(request))
        except APIError as error:
            return render(request, "dashboard/reset_password.html",
                          {"token": token, "error": error}, status=error.status)
        messages.success(request, "Your password was changed. Sign in with the new one.")
        response = redirect("/dashboard/signin")
        dashboard_cookie.clear_session_cookie(response)
        return response


class EndImpersonationView(DashboardView):
    """The banner's end button: the operator leaves; the grant ends and so does the session."""

    required_scopes = {"POST": None}

    def post(self, request: HttpRequest) -> HttpResponse:
        from .. import selectors

        grant = selectors.impersonation_of(self.principal)
        if grant is None:
            raise APIError("NOT_FOUND", "This session is not an impersonation.")
        account_services.impersonation_end_by_session(grant=grant, request=request)
        response = redirect("/admin/accounts/impersonationgrant/")
        dashboard_cookie.clear_session_cookie(response)
        return response
