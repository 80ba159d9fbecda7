from platform_core.api.routers import ApiRouter

from . import views

router = ApiRouter()
router.register("providers", views.ProviderAccountViewSet, basename="provider-account")

urlpatterns = [*router.urls]
