"""Routes under `/api/v1/verify`. The named sub-routes come before the verification
router, so `verify/{id}` never captures analytics, profiles, configs or factors."""

from django.urls import path

from platform_core.api.routers import ApiRouter

from . import views

router = ApiRouter()
# `/configs` is an identical alias of `/profiles` (Document 2, 4.7).
router.register("verify/profiles", views.ProfileViewSet, basename="verify-profile")
router.register("verify/configs", views.ProfileViewSet, basename="verify-config")
router.register("verify/factors/totp", views.TotpFactorViewSet, basename="verify-totp")

verifications = ApiRouter()
verifications.register("verify", views.VerificationViewSet, basename="verification")

urlpatterns = [
    path("verify/send", views.SendView.as_view(), name="verify-send"),
    path("verify/bulk", views.BulkView.as_view(), name="verify-bulk"),
    path("verify/check", views.CheckView.as_view(), name="verify-check"),
    path("verify/analytics", views.AnalyticsView.as_view(), name="verify-analytics"),
    path("verify/conversion-anomaly", views.ConversionAnomalyView.as_view(),
         name="verify-conversion-anomaly"),
    *router.urls,
    *verifications.urls,
]
