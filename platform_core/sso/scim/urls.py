"""django-scim2's URL layout (django_scim/urls.py), mounted once per organization under
/scim/v2/<slug>/ (platform_core/sso/root_urls.py) with our thin view subclasses. The
package's own urls module cannot be included as is: its views reverse one site-wide
'scim:' namespace and carry no organization."""

from django.urls import re_path

from . import views

app_name = "scim"

urlpatterns = [
    re_path(r"^\.search$", views.RootSearchView.as_view(), name="search"),
    re_path(r"^Users/\.search$", views.UserSearchView.as_view(), name="users-search"),
    re_path(r"^Users(?:/(?P<uuid>[^/]+))?$", views.UsersView.as_view(), name="users"),
    re_path(r"^Groups/\.search$", views.GroupSearchView.as_view(), name="groups-search"),
    re_path(r"^Groups(?:/(?P<uuid>[^/]+))?$", views.GroupsView.as_view(), name="groups"),
    re_path(r"^Me$", views.UnsupportedView.as_view(endpoint="Me"), name="me"),
    re_path(
        r"^ServiceProviderConfig$",
        views.ServiceProviderConfigView.as_view(),
        name="service-provider-config",
    ),
    re_path(
        r"^ResourceTypes(?:/(?P<uuid>[^/]+))?$",
        views.ResourceTypesView.as_view(),
        name="resource-types",
    ),
    re_path(r"^Schemas(?:/(?P<uuid>[^/]+))?$", views.SchemasView.as_view(), name="schemas"),
    re_path(r"^Bulk$", views.UnsupportedView.as_view(endpoint="Bulk"), name="bulk"),
    re_path(r"^.*$", views.UnknownView.as_view(), name="unknown"),
]
