"""Segment routes, mounted in config/urls.py before the contacts routes so that
`/contacts/segments/...` is never read as a contact id."""

from django.urls import path

from platform_core.api.routers import ApiRouter

from . import views

router = ApiRouter()
router.register("contacts/segments", views.SegmentViewSet, basename="segment")

urlpatterns = [
    path("contacts/segments/autopilot", views.AutopilotView.as_view(),
         name="segments-autopilot"),
    path("segments/auto-suggest", views.AutoSuggestView.as_view(), name="segments-auto-suggest"),
    path("segments/export.csv", views.SegmentExportView.as_view(), name="segments-export"),
    path("segments/from-clicks", views.FromClicksView.as_view(), name="segments-from-clicks"),
    *router.urls,
]
