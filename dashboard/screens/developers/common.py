"""What the developers and settings screens share with the API they mirror.

- `ApiRulesView`: a DashboardView with the family's sub-navigation. Where the API gates a
  route by role on top of the scope, declare `required_roles` by pointing at the API
  view's own mapping, so the rule lives in one place:
  `required_roles = {"POST": APIKeyViewSet.required_roles["POST"]}`.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import Any, ClassVar

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from dashboard.views.base import DashboardView
from platform_core.errors import APIError
from platform_core.identity.principal import Principal


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


class ApiRulesView(DashboardView):
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


def lines(value: str | None) -> list[str]:
    """A textarea or comma list as a list of non-empty, stripped values."""
    return [part.strip() for part in (value or "").replace(",", "\n").splitlines()
            if part.strip()]
