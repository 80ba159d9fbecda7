"""The organization's settings: name, time zone, currency, default country, sandbox.

The same serializer and service as PATCH /api/v1/organization; any member may look (the
API's GET is open to every member), owners and admins change them.
"""

from __future__ import annotations

import zoneinfo

from django.http import HttpRequest, HttpResponse

from dashboard.views.base import validated
from platform_core.identity import services
from platform_core.identity.api.serializers import OrganizationUpdateSerializer
from platform_core.identity.api.views import OrganizationView as OrganizationAPI
from platform_core.tenancy.models import Organization

from ..developers.common import after_write
from .nav import SettingsView

WRITE = OrganizationAPI.required_scopes["PATCH"]


class OrganizationView(SettingsView):
    required_scopes = {"GET": OrganizationAPI.required_scopes["GET"], "POST": WRITE}
    required_roles = {"POST": OrganizationAPI.required_roles["PATCH"]}
    tab = "organization"
    back_url = "/dashboard/settings/"

    def get(self, request: HttpRequest) -> HttpResponse:
        return self.page(request, "dashboard/settings/organization.html", {
            "org": Organization.objects.get(pk=self.principal.organization.pk),
            "can_edit": self.principal.has_scope(WRITE) and self.role_allows("POST"),
            # Suggestions for the field; the serializer decides what is a time zone.
            "time_zones": sorted(zoneinfo.available_timezones()),
        })

    def post(self, request: HttpRequest) -> HttpResponse:
        form = request.POST
        data = validated(OrganizationUpdateSerializer, {
            "name": form.get("name", "").strip(),
            "timezone": form.get("timezone", "").strip(),
            "currency": form.get("currency", "").strip(),
            "default_country": form.get("default_country", "").strip(),
            "sandbox": form.get("sandbox") == "on",
        }, partial=True)
        services.organization_update(organization=self.principal.organization,
                                     principal=self.principal, request=request, **data)
        return after_write(request, self.back_url, "Organization settings saved.")
