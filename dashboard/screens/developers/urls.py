"""Routes of the developers area under /dashboard/developers/."""

from django.urls import path

from . import keys, views, webhooks

urlpatterns = [
    path("", views.IndexView.as_view(), name="dashboard-developers"),
    path("api-keys", keys.KeysView.as_view(), name="dashboard-api-keys"),
    path("api-keys/<str:key_id>/revoke", keys.KeyRevokeView.as_view(),
         name="dashboard-api-key-revoke"),
    path("webhooks", webhooks.EndpointsView.as_view(), name="dashboard-webhooks"),
    path("webhooks/<str:endpoint_id>", webhooks.EndpointView.as_view(),
         name="dashboard-webhook"),
    path("webhooks/<str:endpoint_id>/enabled", webhooks.EndpointEnabledView.as_view(),
         name="dashboard-webhook-enabled"),
    path("webhooks/<str:endpoint_id>/delete", webhooks.EndpointDeleteView.as_view(),
         name="dashboard-webhook-delete"),
    path("webhooks/<str:endpoint_id>/deliveries", webhooks.DeliveriesView.as_view(),
         name="dashboard-webhook-deliveries"),
    path("webhooks/<str:endpoint_id>/deliveries/<str:delivery_id>",
         webhooks.DeliveryView.as_view(), name="dashboard-webhook-delivery"),
    *(path(f"webhooks/<str:endpoint_id>/deliveries/<str:delivery_id>/{action}",
           webhooks.DeliveryActionView.as_view(), {"action": action},
           name=f"dashboard-webhook-delivery-{action}") for action in ("retry", "replay")),
    path("events", views.EventsView.as_view(), name="dashboard-events"),
]
