from django.urls import path

from messaging.broadcasts.api.views import BroadcastViewSet
from platform_core.api.routers import ApiRouter

from . import views

router = ApiRouter()
router.register("messaging-services", views.MessagingServiceViewSet,
                basename="messaging-service")
router.register("messages", views.MessageViewSet, basename="message")
router.register("broadcasts", BroadcastViewSet, basename="broadcast")

urlpatterns = [
    # The channel routes first, so they are not read as message ids.
    path("messages/sms", views.SmsSendView.as_view(), name="message-send-sms"),
    path("messages/whatsapp", views.WhatsAppSendView.as_view(), name="message-send-whatsapp"),
    path("messages/rcs", views.RcsSendView.as_view(), name="message-send-rcs"),
    path("messaging/callback-secret", views.CallbackSecretView.as_view(),
         name="messaging-callback-secret"),
    path("messaging/callback-secret/rotate", views.CallbackSecretRotateView.as_view(),
         name="messaging-callback-secret-rotate"),
    *router.urls,
]
