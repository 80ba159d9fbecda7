"""Root routes of the SSO family: SAML (Document 1, 4.2) and SCIM (4.3), not under /api/v1."""

from django.urls import include, path, re_path

from . import views

urlpatterns = [
    path("auth/saml/<slug:slug>/metadata", views.SamlMetadataView.as_view(), name="saml-metadata"),
    path("auth/saml/<slug:slug>/login", views.SamlLoginView.as_view(), name="saml-login"),
    path("auth/saml/<slug:slug>/callback", views.SamlCallbackView.as_view(), name="saml-callback"),
    path("auth/saml/<slug:slug>/logout", views.SamlLogoutView.as_view(), name="saml-logout"),
    # SCIM 2.0 on django-scim2, one service provider per organization.
    re_path(r"^scim/v2/(?P<slug>[-a-zA-Z0-9_]+)/?", include("platform_core.sso.scim.urls")),
]
