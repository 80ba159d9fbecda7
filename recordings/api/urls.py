from django.urls import path

from platform_core.api.routers import ApiRouter

from . import views

router = ApiRouter()
router.register("recordings", views.RecordingViewSet, basename="recording")

urlpatterns = [
    path("recordings/<str:pk>/content", views.RecordingContentView.as_view(),
         name="recording-content"),
    *router.urls,
]
