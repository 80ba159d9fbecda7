"""Routes of the Contacts screen, mounted at /dashboard/contacts/. Literal paths come
before `<contact_id>`."""

from django.urls import path

from . import jobs, lists, segments, views

urlpatterns = [
    path("", views.ContactListView.as_view(), name="dashboard-contacts"),
    path("lists/", lists.ListsView.as_view(), name="dashboard-contact-lists"),
    path("lists/add-member", lists.ListAddMemberView.as_view(),
         name="dashboard-contact-list-add-member"),
    path("lists/<str:list_id>", lists.ListDetailView.as_view(), name="dashboard-contact-list"),
    path("lists/<str:list_id>/members/<str:contact_id>/remove",
         lists.ListMemberRemoveView.as_view(), name="dashboard-contact-list-remove"),
    path("segments/", segments.SegmentsView.as_view(), name="dashboard-segments"),
    path("segments/new", segments.SegmentEditView.as_view(), name="dashboard-segment-new"),
    path("segments/count", segments.SegmentCountView.as_view(),
         name="dashboard-segment-count"),
    path("segments/rule-row", segments.RuleRowView.as_view(),
         name="dashboard-segment-rule-row"),
    path("segments/<str:segment_id>", segments.SegmentEditView.as_view(),
         name="dashboard-segment"),
    path("import", jobs.ImportView.as_view(), name="dashboard-contacts-import"),
    path("import/start", jobs.ImportStartView.as_view(), name="dashboard-contacts-import-start"),
    path("imports/<str:job_id>", jobs.ImportJobView.as_view(), name="dashboard-contacts-import-job"),
    path("export", jobs.ExportView.as_view(), name="dashboard-contacts-export"),
    path("exports/<str:job_id>", jobs.ExportJobView.as_view(),
         name="dashboard-contacts-export-job"),
    path("exports/<str:job_id>/download", jobs.ExportDownloadView.as_view(),
         name="dashboard-contacts-export-download"),
    path("<str:contact_id>", views.ContactDetailView.as_view(), name="dashboard-contact"),
]
