"""Routes of the settings area under /dashboard/settings/."""

from django.urls import path

from . import members, organization, sso

urlpatterns = [
    path("", organization.OrganizationView.as_view(), name="dashboard-settings"),
    path("members", members.MembersView.as_view(), name="dashboard-members"),
    path("members/<str:user_id>/role", members.MemberRoleView.as_view(),
         name="dashboard-member-role"),
    path("members/<str:user_id>/remove", members.MemberRemoveView.as_view(),
         name="dashboard-member-remove"),
    path("sso", sso.SsoView.as_view(), name="dashboard-sso-settings"),
    path("sso/saml", sso.SamlSaveView.as_view(), name="dashboard-saml-save"),
    path("sso/saml/test", sso.SamlTestView.as_view(), name="dashboard-saml-test"),
    path("sso/scim/token", sso.ScimTokenView.as_view(), name="dashboard-scim-token"),
    path("sso/scim", sso.ScimSettingsView.as_view(), name="dashboard-scim-settings"),
]
