from django.urls import path

from platform_core.api.routers import ApiRouter

from . import views

router = ApiRouter()
router.register("files", views.FileViewSet, basename="file")

urlpatterns = [
    path("files/<str:pk>/content", views.FileContentView.as_view(), name="file-content"),
    *router.urls,
]
