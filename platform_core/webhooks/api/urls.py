from platform_core.api.routers import ApiRouter

from . import views

router = ApiRouter()
# The dead-letter queue first, so `webhooks/dlq` is not read as an endpoint id.
router.register("webhooks/dlq", views.DeadLetterViewSet, basename="webhook-dlq")
router.register(r"webhooks/(?P<endpoint_id>[^/.]+)/deliveries", views.DeliveryViewSet,
                basename="webhook-delivery")
router.register("webhooks", views.EndpointViewSet, basename="webhook")

urlpatterns = [*router.urls]
