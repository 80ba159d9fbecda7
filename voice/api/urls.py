from django.urls import path

from platform_core.api.routers import ApiRouter

from . import views

router = ApiRouter()
router.register("voice/ivr-flows", views.IvrFlowViewSet, basename="ivr-flow")

urlpatterns = [
    path("voice/twilio/<slug:org_slug>", views.TwilioVoiceView.as_view(), name="voice-twilio"),
    *router.urls,
]
