"""Routes under /api/v1/agents (Document 3, 4.1)."""

from django.urls import path

from .views import AgentViewSet as A

urlpatterns = [
    path("agents", A.as_view({"get": "list", "post": "create"}), name="agent-list"),
    path("agents/<str:pk>", A.as_view({"get": "retrieve", "patch": "partial_update",
                                       "delete": "destroy"}), name="agent-detail"),
    path("agents/<str:pk>/deploy", A.as_view({"post": "deploy"}), name="agent-deploy"),
    path("agents/<str:pk>/undeploy", A.as_view({"post": "undeploy"}), name="agent-undeploy"),
]
