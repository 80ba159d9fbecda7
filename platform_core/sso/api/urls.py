from django.urls import path

from . import views

urlpatterns = [
    path("settings/saml", views.SamlSettingsView.as_view(), name="settings-saml"),
    path("settings/scim", views.ScimSettingsView.as_view(), name="settings-scim"),
    path(
        "settings/scim/generate-token",
        views.ScimTokenView.as_view(),
        name="settings-scim-generate-token",
    ),
    path("auth/sso/exchange", views.SsoExchangeView.as_view(), name="auth-sso-exchange"),
]
