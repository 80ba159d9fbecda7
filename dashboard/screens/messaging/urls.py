from django.urls import path

from . import broadcasts_screen, templates_screen, views

urlpatterns = [
    path("", views.MessageLogView.as_view(), name="dashboard-messaging"),
    path("templates/", templates_screen.TemplatesView.as_view(),
         name="dashboard-messaging-templates"),
    path("templates/<str:template_id>/decision", templates_screen.TemplateDecisionView.as_view(),
         name="dashboard-messaging-template-decision"),
    path("broadcasts/", broadcasts_screen.BroadcastsView.as_view(),
         name="dashboard-messaging-broadcasts"),
    path("broadcasts/<str:broadcast_id>", broadcasts_screen.BroadcastRowView.as_view(),
         name="dashboard-messaging-broadcast"),
    path("<str:message_id>", views.MessageDetailView.as_view(),
         name="dashboard-messaging-message"),
]
