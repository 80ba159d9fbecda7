"""Template routes. Included before messaging's, so /messages/templates/... and
/messages/content-templates/... never reach /messages/{id}."""

from django.urls import path

from platform_core.api.routers import ApiRouter

from . import views

router = ApiRouter()
router.register("messages/templates", views.TemplateViewSet, basename="message-template")
router.register("messages/content-templates", views.ContentTemplateViewSet,
                basename="content-template")
router.register("templates", views.TemplateAliasViewSet, basename="template-alias")

urlpatterns = [
    path("sandbox/templates/<str:pk>/decision", views.SandboxDecisionView.as_view(),
         name="sandbox-template-decision"),
    path("inbound/whatsapp-templates/<slug:org_slug>", views.WhatsAppTemplateWebhookView.as_view(),
         name="whatsapp-template-webhook"),
    *router.urls,
]
