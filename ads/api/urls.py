from django.urls import path

from platform_core.api.routers import ApiRouter

from . import views

router = ApiRouter()
router.register("ads/campaigns", views.CampaignViewSet, basename="ads-campaign")
router.register("ads/audiences", views.AudienceViewSet, basename="ads-audience")

urlpatterns = [
    path("ads/connect", views.ConnectView.as_view(), name="ads-connect"),
    path("ads/oauth/exchange", views.OAuthExchangeView.as_view(), name="ads-oauth-exchange"),
    path("ads/status", views.StatusView.as_view(), name="ads-status"),
    path("ads/conversions/dataset", views.DatasetView.as_view(), name="ads-dataset"),
    path("ads/conversions/test", views.ConversionTestView.as_view(), name="ads-conversion-test"),
    path("ads/conversions", views.ConversionView.as_view(), name="ads-conversions"),
    path("ads/leads/ingest", views.LeadsIngestView.as_view(), name="ads-leads-ingest"),
    *router.urls,
]
