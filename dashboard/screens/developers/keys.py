"""API keys: list, create (the full key shown once, in the answer to the create), revoke.

Same service, scopes and roles as /api/v1/api-keys: `api_key_create` refuses scopes the
signed-in member does not hold and public keys with write scopes; the role gate is the
API viewset's own.
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from dashboard.views.base import validated
from platform_core.errors import APIError
from platform_core.identity import selectors, services
from platform_core.identity.api.serializers import APIKeyCreateSerializer
from platform_core.identity.api.views import APIKeyViewSet
from platform_core.identity.models import KeyMode, KeyType

from .common import after_write, lines, shown_once
from .nav import DevelopersView

# The scopes offered as checkboxes (any other goes in the free "other scopes" field).
COMMON_SCOPES = [
    ("*", "Full access"),
    ("contacts:read", ""), ("contacts:write", ""),
    ("messages:read", ""), ("messages:write", ""),
    ("conversations:read", ""), ("conversations:write", ""),
    ("templates:read", ""), ("templates:write", ""),
    ("webhooks:read", ""), ("webhooks:write", ""),
    ("events:read", ""), ("events:write", ""),
    ("files:read", ""), ("files:write", ""),
]

READ, WRITE = APIKeyViewSet.required_scopes["GET"], APIKeyViewSet.required_scopes["POST"]
ROLES = APIKeyViewSet.required_roles


class _KeysView(DevelopersView):
    required_roles = {"GET": ROLES["GET"], "POST": ROLES["POST"]}
    tab = "keys"
    back_url = "/dashboard/developers/api-keys"

    def page_context(self, **extra) -> dict:
        org = self.principal.organization
        return {
            "keys": selectors.api_keys().select_related("created_by"),
            "key_types": KeyType.values,
            "key_modes": KeyMode.values,
            "default_mode": KeyMode.TEST if org.sandbox else KeyMode.LIVE,
            "common_scopes": COMMON_SCOPES,
            "write_scope": WRITE,
            **extra,
        }


class KeysView(_KeysView):
    """GET the list and the create form; POST creates a key and shows it once."""

    required_scopes = {"GET": READ, "POST": WRITE}

    def get(self, request: HttpRequest) -> HttpResponse:
        return self.page(request, "dashboard/developers/keys.html", self.page_context())

    def post(self, request: HttpRequest) -> HttpResponse:
        form = request.POST
        scopes = form.getlist("scopes") + lines(form.get("other_scopes"))
        data = validated(APIKeyCreateSerializer, {
            "name": form.get("name", "").strip(),
            "type": form.get("type") or KeyType.SECRET,
            **({"mode": form["mode"]} if form.get("mode") else {}),
            "scopes": list(dict.fromkeys(scopes)),
            "allowed_ips": lines(form.get("allowed_ips")),
        })
        key, raw = services.api_key_create(
            organization=self.principal.organization, name=data["name"],
            key_type=data["type"], mode=data.get("mode"), scopes=data["scopes"],
            allowed_ips=data["allowed_ips"], principal=self.principal, request=request)
        context = self.page_context(created=key, raw_key=raw)
        if request.htmx:
            return shown_once(render(request, "dashboard/developers/_key_created.html",
                                     context))
        return shown_once(self.page(request, "dashboard/developers/keys.html", context,
                                    status=201))


class KeyRevokeView(_KeysView):
    required_scopes = {"POST": WRITE}

    def post(self, request: HttpRequest, key_id: str) -> HttpResponse:
        key = selectors.api_key(key_id)
        if key is None:
            raise APIError("NOT_FOUND", "No such API key.")
        services.api_key_revoke(key=key, principal=self.principal, request=request)
        if request.htmx:
            return render(request, "dashboard/developers/_key_list.html",
                          self.page_context(revoked=key))
        return after_write(request, self.back_url, f"Key {key.name} revoked.")
