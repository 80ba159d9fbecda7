from django.urls import path

from . import views

urlpatterns = [
    path("insights/llm-spend/overview", views.OverviewView.as_view(),
         name="insights-llm-spend-overview"),
    path("insights/llm-spend/summary", views.SummaryView.as_view(),
         name="insights-llm-spend-summary"),
    path("insights/llm-spend/timeseries", views.TimeseriesView.as_view(),
         name="insights-llm-spend-timeseries"),
    path("insights/llm-spend/top-conversations", views.TopConversationsView.as_view(),
         name="insights-llm-spend-top-conversations"),
    path("insights/llm-spend/by-feature", views.ByFeatureView.as_view(),
         name="insights-llm-spend-by-feature"),
    path("insights/llm-spend/budget", views.BudgetView.as_view(),
         name="insights-llm-spend-budget"),
    path("insights/agent-roi", views.RoiView.as_view(), name="insights-agent-roi"),
    path("insights/agent-roi/timeseries", views.RoiTimeseriesView.as_view(),
         name="insights-agent-roi-timeseries"),
    path("insights/agent-roi/config", views.RoiConfigView.as_view(),
         name="insights-agent-roi-config"),
    path("insights/containment", views.ContainmentView.as_view(), name="insights-containment"),
    path("insights/containment/timeseries", views.ContainmentTimeseriesView.as_view(),
         name="insights-containment-timeseries"),
    path("insights/agent-comparison", views.ComparisonView.as_view(),
         name="insights-agent-comparison"),
    path("insights/agent-benchmarks", views.BenchmarksView.as_view(),
         name="insights-agent-benchmarks"),
    path("insights/cost-economics", views.CostEconomicsView.as_view(),
         name="insights-cost-economics"),
    path("insights/cost-economics/config", views.CostEconomicsConfigView.as_view(),
         name="insights-cost-economics-config"),
]
