"""Deny by default: every view declares the scope (and optionally roles) each action needs.

    required_scopes = {"GET": "templates:read", "POST": "templates:write"}
    required_roles = {"POST": {"owner", "admin"}}      # optional, on top of the scope
    test_mode_only = True       # optional: sandbox simulations; else 403 TEST_MODE_ONLY
    api_key_only = True         # optional: API-only (no dashboard session); else 403 API_KEY_REQUIRED

Keys may be HTTP methods or viewset action names (an action name wins). A method or
action missing from `required_scopes` is refused; `None` means any authenticated caller.
"""

from __future__ import annotations

from rest_framework.permissions import BasePermission

from platform_core.errors import APIError

from .authentication import WWW_AUTHENTICATE

_READ_ALIASES = {"HEAD": "GET", "OPTIONS": "GET"}


def _declared(mapping: dict, view, method: str):
    action = getattr(view, "action", None)
    if action and action in mapping:
        return True, mapping[action]
    method = _READ_ALIASES.get(method, method)
    if method in mapping:
        return True, mapping[method]
    return False, None


def require_scope(principal, scope: str | None) -> None:
    """401 without a caller (naming the scheme, RFC 9110), 403 without `scope`: the one
    check of the REST views and of the endpoints served outside DRF (the event stream)."""
    if principal is None:
        raise APIError("UNAUTHORIZED", headers={"WWW-Authenticate": WWW_AUTHENTICATE})
    if scope is not None and not principal.has_scope(scope):
        raise APIError(
            "INSUFFICIENT_PERMISSIONS",
            f"This needs the `{scope}` scope.",
            details={"required_scope": scope},
        )


class DeclaredScopes(BasePermission):
    def has_permission(self, request, view) -> bool:
        if getattr(view, request.method.lower(), None) is None:
            return True  # no handler: the view answers 405 METHOD_NOT_ALLOWED
        principal = request.auth
        require_scope(principal, None)
        found, scope = _declared(getattr(view, "required_scopes", {}), view, request.method)
        if not found:
            raise APIError("INSUFFICIENT_PERMISSIONS", "This action is not open to API callers.")
        require_scope(principal, scope)
        found, roles = _declared(getattr(view, "required_roles", {}), view, request.method)
        if found and roles and principal.role not in roles:
            raise APIError(
                "INSUFFICIENT_PERMISSIONS",
                "Your role does not allow this.",
                details={"required_roles": sorted(roles)},
            )
        if getattr(view, "test_mode_only", False) and not principal.organization.sandbox:
            raise APIError("TEST_MODE_ONLY")
        if getattr(view, "api_key_only", False) and principal.kind != "api_key":
            raise APIError("API_KEY_REQUIRED")
        return True


class Public:
    """Marker for views open without credentials (login, health, signed downloads)."""
