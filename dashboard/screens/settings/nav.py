"""The settings area's sub-navigation: each tab open to the roles the API opens it to."""

from __future__ import annotations

from platform_core.identity.api.views import UserViewSet
from platform_core.sso.api.views import SamlSettingsView

from ..developers.common import ApiRulesView, Tab

TABS = [
    Tab("organization", "Organization", "/dashboard/settings/"),
    Tab("members", "Members and roles", "/dashboard/settings/members",
        UserViewSet.required_scopes["GET"]),
    Tab("sso", "Single sign-on and SCIM", "/dashboard/settings/sso",
        SamlSettingsView.required_scopes["GET"], SamlSettingsView.required_roles["GET"]),
]


class SettingsView(ApiRulesView):
    tabs = TABS
