from django.urls import path

from platform_core.api.routers import ApiRouter

from . import views

router = ApiRouter()
router.register("numbers/porting", views.PortingRequestViewSet, basename="number-porting")

urlpatterns = [
    path("numbers/lookup/<str:phone_number>", views.NumberLookupView.as_view(),
         name="number-lookup"),
    *router.urls,
]
