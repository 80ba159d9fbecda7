"""Single sign-on (SAML) and provisioning (SCIM) setup.

Shows what to give the identity provider (this organization's SP metadata URL, ACS URL,
entity id), takes the IdP's SSO URL, entity id and certificate or its metadata XML, and
runs the connection test the settings service runs before enabling
(`platform_core.sso.saml.connection_test`). As in the API: admins and owners look,
only owners change SAML (Document 1, 4.2: "owner only in the dashboard"); admins and
owners manage SCIM, whose bearer token is shown once.
"""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from dashboard.views.base import validated
from platform_core.sso import saml, selectors, services
from platform_core.sso.api import views as sso_api
from platform_core.sso.api.serializers import (
    SamlSettingsUpdateSerializer,
    ScimSettingsUpdateSerializer,
)
from platform_core.tenancy.models import ROLE_RANK, Role

from ..developers.common import after_write, shown_once
from .nav import SettingsView

SAML_API, SCIM_API = sso_api.SamlSettingsView, sso_api.ScimSettingsView
TOKEN_API = sso_api.ScimTokenView
BASE = "/dashboard/settings/sso"
IDP_FIELDS = ("idp_entity_id", "idp_sso_url", "idp_slo_url", "idp_x509_cert")


def saml_body(form) -> dict[str, Any]:
    """The form as the API's PATCH body: the metadata XML when pasted, else the fields
    (the service takes one or the other, never both)."""
    xml = form.get("idp_metadata_xml", "").strip()
    if xml:
        return {"idp_metadata_xml": xml}
    return {"idp_metadata_xml": "",
            **{name: form.get(name, "").strip() for name in IDP_FIELDS}}


class _SsoView(SettingsView):
    tab = "sso"
    back_url = BASE

    def context(self, **extra) -> dict:
        org = self.principal.organization
        return {
            "saml": selectors.saml_settings(org, selectors.saml_config()),
            "scim": selectors.scim_settings(org, selectors.scim_config()),
            "can_edit_saml": (self.principal.has_scope(SAML_API.required_scopes["PATCH"])
                              and self.principal.role in SAML_API.required_roles["PATCH"]),
            "can_edit_scim": (self.principal.has_scope(SCIM_API.required_scopes["PATCH"])
                              and self.principal.role in SCIM_API.required_roles["PATCH"]),
            "scim_roles": [r for r in Role.values
                           if ROLE_RANK[r] <= ROLE_RANK.get(self.principal.role, 0)],
            **extra,
        }


class SsoView(_SsoView):
    required_scopes = {"GET": SAML_API.required_scopes["GET"]}
    required_roles = {"GET": SAML_API.required_roles["GET"]}

    def get(self, request: HttpRequest) -> HttpResponse:
        return self.page(request, "dashboard/settings/sso.html", self.context())


class SamlSaveView(_SsoView):
    """Save the IdP settings and the enabled switch (enabling runs the connection test in
    the service and is refused with its issues when it fails)."""

    required_scopes = {"POST": SAML_API.required_scopes["PATCH"]}
    required_roles = {"POST": SAML_API.required_roles["PATCH"]}

    def post(self, request: HttpRequest) -> HttpResponse:
        body = {**saml_body(request.POST), "enabled": request.POST.get("enabled") == "on"}
        data = validated(SamlSettingsUpdateSerializer, body, partial=True)
        config = services.saml_config_update(principal=self.principal, request=request, **data)
        return after_write(request, BASE, "SAML settings saved; single sign-on is "
                           + ("on." if config.enabled else "off."))


class SamlTestView(_SsoView):
    """The connection test over the form's values, without saving them."""

    required_scopes = {"POST": SAML_API.required_scopes["GET"]}
    required_roles = {"POST": SAML_API.required_roles["GET"]}

    def post(self, request: HttpRequest) -> HttpResponse:
        body = saml_body(request.POST)
        issues = saml.connection_test(**{name: body.get(name, "") for name in
                                         (*IDP_FIELDS, "idp_metadata_xml")})
        context = {"issues": issues, "tested_metadata": bool(body["idp_metadata_xml"])}
        if request.htmx:
            return render(request, "dashboard/settings/_saml_test.html", context)
        return self.page(request, "dashboard/settings/sso.html",
                         self.context(test_result=context))


class ScimTokenView(_SsoView):
    """A new SCIM token (enables SCIM), shown once; the previous one stops at once."""

    required_scopes = {"POST": TOKEN_API.required_scopes["POST"]}
    required_roles = {"POST": TOKEN_API.required_roles["POST"]}

    def post(self, request: HttpRequest) -> HttpResponse:
        _config, raw = services.scim_token_generate(principal=self.principal, request=request)
        context = self.context(scim_token=raw)
        if request.htmx:
            return shown_once(render(request, "dashboard/settings/_scim.html", context))
        return shown_once(self.page(request, "dashboard/settings/sso.html", context))


class ScimSettingsView(_SsoView):
    """Turn SCIM off (revokes the token) or set the highest role its groups grant."""

    required_scopes = {"POST": SCIM_API.required_scopes["PATCH"]}
    required_roles = {"POST": SCIM_API.required_roles["PATCH"]}

    def post(self, request: HttpRequest) -> HttpResponse:
        form = request.POST
        body: dict[str, Any] = {}
        if form.get("max_role"):
            body["max_role"] = form["max_role"]
        if form.get("enabled") == "0":
            body["enabled"] = False
        data = validated(ScimSettingsUpdateSerializer, body, partial=True)
        services.scim_config_update(principal=self.principal, request=request, **data)
        context = self.context(scim_note="SCIM turned off; the token no longer works."
                               if body.get("enabled") is False else "SCIM settings saved.")
        if request.htmx:
            return render(request, "dashboard/settings/_scim.html", context)
        return after_write(request, BASE, context["scim_note"])
