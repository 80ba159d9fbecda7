"""Inbound routes, mounted at /api/v1/: provider webhooks per organization and the
test-mode injection."""

from django.urls import path

from . import views

urlpatterns = [
    path("inbound/twilio/<slug:org_slug>", views.TwilioInboundView.as_view(),
         name="inbound-twilio"),
    path("inbound/whatsapp/<slug:org_slug>", views.WhatsAppInboundView.as_view(),
         name="inbound-whatsapp"),
    path("inbound/rcs/<slug:org_slug>", views.RcsInboundView.as_view(), name="inbound-rcs"),
    path("sandbox/inbound", views.SandboxInboundView.as_view(), name="sandbox-inbound"),
]
