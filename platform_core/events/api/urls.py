from django.urls import path, re_path

from . import views

urlpatterns = [
    re_path(r"^events/?$", views.EventListView.as_view(), name="events-list"),
    path("events/stream", views.EventStreamView.as_view(), name="events-stream"),
    path("events/track", views.TrackView.as_view(), name="events-track"),
    path("events/<str:event_id>", views.EventDetailView.as_view(), name="events-detail"),
    path("developer/event-sinks/<str:kind>", views.EventSinkView.as_view(),
         name="event-sinks-detail"),
]
