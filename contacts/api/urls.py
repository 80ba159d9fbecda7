"""Contact routes. Literal paths (`contacts/lists`, `contacts/export`, `contacts/bulk/export`,
`contacts/exports`) come before `contacts/{id}`; segment routes are mounted before this
module (config/urls.py), so `contacts/segments/...` never reaches it."""

from django.urls import re_path

from platform_core.api.routers import ApiRouter

from . import views

lists = ApiRouter()
lists.register(r"contacts/lists/(?P<list_id>[^/.]+)/members", views.ListMemberViewSet,
               basename="contact-list-member")
lists.register("contacts/lists", views.ContactListViewSet, basename="contact-list")
lists.register("contacts/exports", views.ExportJobViewSet, basename="contact-export")

contacts = ApiRouter()
contacts.register("contacts", views.ContactViewSet, basename="contact")

urlpatterns = [
    *lists.urls,
    re_path(r"^contacts/export/?$", views.ContactExportView.as_view(), name="contacts-export"),
    re_path(r"^contacts/bulk/export/?$", views.ContactBulkExportView.as_view(),
            name="contacts-bulk-export"),
    *contacts.urls,
]
