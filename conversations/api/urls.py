from django.urls import path

from platform_core.api.routers import ApiRouter

from . import cobrowse_views, views

router = ApiRouter()
router.register("conversations", views.ConversationViewSet, basename="conversation")
router.register("routing/agents", cobrowse_views.RoutingAgentViewSet, basename="routing-agent")

urlpatterns = [
    path("cobrowse/<str:conversation_id>", cobrowse_views.CobrowseSessionView.as_view(),
         name="cobrowse-session"),
    path("cobrowse/<str:conversation_id>/join", cobrowse_views.CobrowseJoinView.as_view(),
         name="cobrowse-join"),
    path("cobrowse/<str:conversation_id>/end", cobrowse_views.CobrowseEndView.as_view(),
         name="cobrowse-end"),
    path("widget/cobrowse", cobrowse_views.WidgetCobrowseView.as_view(),
         name="widget-cobrowse"),
    *router.urls,
]
