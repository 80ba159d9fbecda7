"""A URLconf for tests that need views the product does not have (a crash, a bare list)."""

from django.db import connection
from django.urls import include, path
from rest_framework.response import Response

from platform_core.api.views import PlatformAPIView


class CrashView(PlatformAPIView):
    required_scopes = {"GET": None}

    def get(self, request):
        raise RuntimeError("boom: an unexpected failure")


class DatabaseCrashView(PlatformAPIView):
    required_scopes = {"GET": None}

    def get(self, request):
        with connection.cursor() as cursor:
            cursor.execute("SELECT * FROM table_that_does_not_exist")
        return Response({})


urlpatterns = [
    path("test/crash", CrashView.as_view()),
    path("test/db-crash", DatabaseCrashView.as_view()),
    path("", include("config.urls")),
]


class BulkLimitedView(PlatformAPIView):
    """Stands in for an endpoint with its own limit (bulk verify: 2 a minute per tenant)."""

    from platform_core.api.ratelimit import RateLimit

    required_scopes = {"POST": None}
    rate_limits = {"POST": [RateLimit("bulk_verify", 2, 60, per="organization")]}
    idempotent_posts = False

    def post(self, request):
        return Response({"accepted": True}, status=202)


class FailingCreateView(PlatformAPIView):
    required_scopes = {"POST": None}

    def post(self, request):
        raise RuntimeError("transient failure")


urlpatterns.insert(0, path("test/bulk", BulkLimitedView.as_view()))
urlpatterns.insert(0, path("test/failing-create", FailingCreateView.as_view()))
