"""What the developers and settings screens share with the API they mirror.

- `ApiRulesView`: a DashboardView that also enforces the API endpoint's `required_roles`
  (the API keys and SAML routes gate by role on top of the scope). Declare them by
  pointing at the API view's own mapping, so the rule lives in one place:
  `required_roles = {"POST": APIKeyViewSet.required_roles["POST"]}`.
- `validated`: run the API endpoint's own request serializer over the form's values, so
  the dashboard accepts exactly what the API accepts; a refusal is the API's 422.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import Any, ClassVar

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views import View
from rest_framework import exceptions as drf
from rest_framework import serializers

from dashboard.views.base import DashboardView, error_response
from platform_core.api.exceptions import to_api_error
from platform_core.errors import APIError
from platform_core.identity.principal import Principal


class _RoleGate(View):
    """Runs after DashboardView.dispatch has set `self.principal` and checked the scope
    (it sits after DashboardView in the MRO), before the method handler."""

    required_roles: ClassVar[dict[str, Collection[str]]] = {}

    def dispatch(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        method = "GET" if request.method == "HEAD" else request.method
        roles = self.required_roles.get(method)
        if roles and self.principal.role not in roles:
            return error_response(request, APIError(
                "INSUFFICIENT_PERMISSIONS",
                f"Your role ({self.principal.role}) does not allow this.",
                details={"required_roles": sorted(roles)}))
        return super().dispatch(request, *args, **kwargs)


@dataclass(frozen=True)
class Tab:
    """One tab of a family's sub-navigation, shown to roles holding its scope and role."""

    key: str
    label: str
    url: str
    scope: str | None = None
    roles: Collection[str] = ()

    def open_to(self, principal: Principal) -> bool:
        return ((self.scope is None or principal.has_scope(self.scope))
                and (not self.roles or principal.role in self.roles))


class ApiRulesView(DashboardView, _RoleGate):
    """Base of the developers and settings screens: scopes and roles as the API has them.
    `tabs` and `tab` name the family's sub-navigation and this page's place in it."""

    tabs: ClassVar[list[Tab]] = []
    tab: ClassVar[str] = ""
    # Where a plain (non-htmx) form POST that failed goes back to, with the error as a
    # message: the page holding the form (the POST-only URL itself would answer 405).
    back_url: ClassVar[str | None] = None

    def handle_error(self, request: HttpRequest, error: APIError) -> HttpResponse:
        if not request.htmx and request.method == "POST":
            messages.error(request, f"{error.message} ({error.code})")
            return redirect(self.error_back_url(request))
        return super().handle_error(request, error)

    def error_back_url(self, request: HttpRequest) -> str:
        return self.back_url or request.get_full_path()

    def page(self, request: HttpRequest, template: str, context: dict[str, Any],
             *, status: int = 200) -> HttpResponse:
        context = {
            "tabs": [t for t in self.tabs if t.open_to(self.principal)],
            "active_tab": self.tab,
            **context,
        }
        return render(request, template, context, status=status)

    def role_allows(self, method: str) -> bool:
        """Whether the signed-in role passes `method`'s role gate (pages hide the controls
        of a method it does not)."""
        roles = self.required_roles.get(method)
        return not roles or self.principal.role in roles


def after_write(request: HttpRequest, url: str, note: str) -> HttpResponse:
    """After a successful form POST: the note as a message and the page at `url` (htmx
    follows HX-Redirect with a full load, so the message shows there too)."""
    messages.success(request, note)
    if request.htmx:
        response = HttpResponse(status=204)
        response["HX-Redirect"] = url
        return response
    return redirect(url)


def shown_once(response: HttpResponse) -> HttpResponse:
    """A response carrying a secret shown once (a key, a signing secret, a SCIM token):
    never kept by the browser's or any proxy's cache."""
    response["Cache-Control"] = "no-store"
    return response


def validated(serializer_class: type[serializers.Serializer], data: dict[str, Any], *,
              partial: bool = False) -> dict[str, Any]:
    """The serializer's validated data, or the API's VALIDATION_ERROR (422) naming the
    fields (raised as APIError, which DashboardView shows)."""
    body = serializer_class(data=data, partial=partial)
    if not body.is_valid():
        raise to_api_error(drf.ValidationError(body.errors))
    return dict(body.validated_data)


def lines(value: str | None) -> list[str]:
    """A textarea or comma list as a list of non-empty, stripped values."""
    return [part.strip() for part in (value or "").replace(",", "\n").splitlines()
            if part.strip()]
