from platform_core.api.routers import ApiRouter

from . import views

router = ApiRouter()
router.register("conversations", views.ConversationViewSet, basename="conversation")

urlpatterns = [*router.urls]
