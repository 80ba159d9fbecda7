"""Routes under `/api/v1/rcs` (Document 2, 4.6), each with its methods mapped explicitly:
`PUT /bots` updates an agent named in the body, and the agent's devices and templates are
sub-resources addressed by phone and by name."""

from django.urls import path

from . import views

A = views.AgentViewSet
B = views.BrandViewSet

urlpatterns = [
    path("rcs/brands", B.as_view({"get": "list", "post": "create"}), name="rcs-brand-list"),
    path("rcs/brands/<str:pk>", B.as_view({"get": "retrieve", "patch": "partial_update",
                                           "delete": "destroy"}), name="rcs-brand-detail"),
    path("rcs/brands/<str:pk>/submit", B.as_view({"post": "submit"}), name="rcs-brand-submit"),
    path("rcs/bots", A.as_view({"get": "list", "post": "create", "put": "update_profile"}),
         name="rcs-bot-list"),
    path("rcs/bots/<str:pk>", A.as_view({"get": "retrieve", "delete": "destroy"}),
         name="rcs-bot-detail"),
    path("rcs/bots/<str:pk>/verify", A.as_view({"post": "verify"}), name="rcs-bot-verify"),
    path("rcs/bots/<str:pk>/devices", A.as_view({"get": "devices", "post": "device_add",
                                                 "delete": "device_remove"}),
         name="rcs-bot-devices"),
    path("rcs/bots/<str:pk>/tester-invite", A.as_view({"post": "tester_invite"}),
         name="rcs-bot-tester-invite"),
    path("rcs/bots/<str:pk>/templates", A.as_view({"get": "templates",
                                                   "post": "template_create"}),
         name="rcs-bot-templates"),
    path("rcs/bots/<str:pk>/templates/<str:name>",
         A.as_view({"get": "template_read", "put": "template_replace",
                    "delete": "template_delete"}), name="rcs-bot-template"),
    path("rcs/bots/<str:pk>/quality", A.as_view({"get": "quality"}), name="rcs-bot-quality"),
    path("rcs/capability/<str:bot_id>/<str:phone>", views.CapabilityView.as_view(),
         name="rcs-capability"),
    path("rcs/analytics/templates", views.TemplateAnalyticsView.as_view(),
         name="rcs-analytics-templates"),
    path("rcs/analytics/daily", views.DailyAnalyticsView.as_view(), name="rcs-analytics-daily"),
    path("rcs/reach-scan", views.ReachScanView.as_view(), name="rcs-reach-scan"),
    path("rcs/commerce/catalog", views.CatalogView.as_view(), name="rcs-commerce-catalog"),
    path("rcs/commerce/send-catalog", views.SendCatalogView.as_view(),
         name="rcs-commerce-send-catalog"),
]
