"""The one base of every signed-in dashboard page: cookie session, tenancy, roles, errors.

`DashboardView.dispatch` reads the session cookie through the same credential check as the
API (a revoked or expired session signs the browser out), sets the current organization
for the request exactly as the API's base view does, and checks the role against the
scope each method declares in `required_scopes` (a method not declared answers 405), and
the roles of `required_roles` where the API's endpoint names roles too. A
viewer is shown no write control, and a write it sends anyway is refused here with 403.

Service errors (`APIError`) become the error fragment for htmx requests (swapped into
`#flash` by the `HX-Retarget` header) and a message on the page otherwise.
"""

from __future__ import annotations

from typing import Any, ClassVar
from urllib.parse import urlencode, urlsplit

from django.conf import settings
from django.contrib import messages
from django.http import HttpRequest, HttpResponse, HttpResponseNotAllowed
from django.shortcuts import redirect, render
from django.views import View
from rest_framework import exceptions as drf
from rest_framework import serializers

from platform_core.api.exceptions import to_api_error
from platform_core.errors import APIError
from platform_core.identity import credentials, dashboard_cookie
from platform_core.identity.principal import Principal
from platform_core.tenancy.context import reset_current_organization, set_current_organization

from .. import selectors

SIGN_IN_URL = "/dashboard/signin"


def safe_next(value: str | None) -> str:
    """Only a dashboard path: never another host, scheme or a backslash trick."""
    value = (value or "").strip()
    if (not value.startswith("/dashboard") or value.startswith("//") or "\\" in value
            or any(ord(c) < 32 for c in value)):
        return "/dashboard/"
    return value


def validated(serializer_class: type[serializers.Serializer], data: dict[str, Any], *,
              partial: bool = False) -> dict[str, Any]:
    """A form's values through the API endpoint's own request serializer, so a screen
    accepts exactly what the API accepts; a refusal is the API's 422 VALIDATION_ERROR
    naming the fields (an APIError, which DashboardView shows)."""
    body = serializer_class(data=data, partial=partial)
    if not body.is_valid():
        raise to_api_error(drf.ValidationError(body.errors))
    return dict(body.validated_data)


def back_to(request: HttpRequest) -> str:
    """The dashboard page a form was posted from (its Referer on this host), else home."""
    referer = urlsplit(request.META.get("HTTP_REFERER", ""))
    if referer.netloc == request.get_host():
        return safe_next(referer.path + (f"?{referer.query}" if referer.query else ""))
    return "/dashboard/"


def sign_in_redirect(request: HttpRequest) -> HttpResponse:
    target = f"{SIGN_IN_URL}?{urlencode({'next': request.get_full_path()})}"
    if request.htmx:
        # htmx follows a redirect inside the swap; send the whole page to the sign-in.
        response = HttpResponse(status=204)
        response["HX-Redirect"] = target
    else:
        response = redirect(target)
    dashboard_cookie.clear_session_cookie(response)
    return response


def error_response(request: HttpRequest, error: APIError, *, status: int | None = None
                   ) -> HttpResponse:
    """An APIError shown to a person: its registered code and message, its status."""
    context = {"error": error, "details": error.details or {}}
    if request.htmx:
        response = render(request, "dashboard/_error.html", context,
                           status=status or error.status)
        response["HX-Retarget"] = "#flash"
        response["HX-Reswap"] = "innerHTML"
        return response
    return render(request, "dashboard/error.html", context, status=status or error.status)


class DashboardView(View):
    """Base of every signed-in page. Declare `required_scopes` per method: a scope such as
    `contacts:write`, or None for any member (the frame, their own profile)."""

    required_scopes: ClassVar[dict[str, str | None]] = {}
    # Roles on top of the scope, per method, where the API's endpoint names roles too.
    required_roles: ClassVar[dict[str, set[str]]] = {}
    # Pages an impersonated or not-yet-consented session may open (the consent page).
    skip_consent: ClassVar[bool] = False

    principal: Principal

    def dispatch(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        token = dashboard_cookie.token_from_request(request)
        if not token:
            return sign_in_redirect(request)
        try:
            principal = credentials.principal_for_session_token(token)
        except APIError:
            return sign_in_redirect(request)
        self.principal = request.principal = principal
        if request.method not in self.required_scopes and request.method != "HEAD":
            return HttpResponseNotAllowed(list(self.required_scopes))
        tenant_token = set_current_organization(principal.organization)
        try:
            scope = self.required_scopes.get(request.method, self.required_scopes.get("GET"))
            if scope is not None and not principal.has_scope(scope):
                return error_response(request, APIError(
                    "INSUFFICIENT_PERMISSIONS",
                    f"Your role ({principal.role}) cannot do this: it needs `{scope}`.",
                    details={"required_scope": scope}))
            roles = self.required_roles.get(request.method)
            if roles and principal.role not in roles:
                return error_response(request, APIError(
                    "INSUFFICIENT_PERMISSIONS",
                    f"Your role ({principal.role}) cannot do this.",
                    details={"required_roles": sorted(roles)}))
            if not self.skip_consent and self._needs_consent(principal):
                return redirect(f"/dashboard/consent?{urlencode({'next': request.get_full_path()})}")
            try:
                return super().dispatch(request, *args, **kwargs)
            except APIError as error:
                return self.handle_error(request, error)
        finally:
            reset_current_organization(tenant_token)

    def _needs_consent(self, principal: Principal) -> bool:
        if principal.impersonator_id:  # an operator acts for the member; never consents
            return False
        return not selectors.consent_current(
            principal.user_id, settings.DASHBOARD_TERMS_VERSION,
            settings.DASHBOARD_PRIVACY_VERSION)

    def handle_error(self, request: HttpRequest, error: APIError) -> HttpResponse:
        """Override to re-render a form with the error; the default shows it."""
        if not request.htmx and request.method == "POST":
            messages.error(request, f"{error.message} ({error.code})")
            return redirect(back_to(request))
        return error_response(request, error)

    def can(self, scope: str) -> bool:
        return self.principal.has_scope(scope)
