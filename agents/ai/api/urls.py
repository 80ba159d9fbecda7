"""Routes under `/api/v1/ai` (the knowledge base under /ai/kb arrives with its issue)."""

from django.urls import path, re_path

from . import views

_ROUTES = [
    ("analyze", views.AnalyzeView, "ai-analyze"),
    ("classify-intent", views.ClassifyIntentView, "ai-classify-intent"),
    ("summarize-conversation", views.SummarizeConversationView, "ai-summarize-conversation"),
    ("dashboard-insights", views.DashboardInsightsView, "ai-dashboard-insights"),
    ("suggest-reply", views.SuggestReplyView, "ai-suggest-reply"),
    ("generate-content", views.GenerateContentView, "ai-generate-content"),
    ("improve-text", views.ImproveTextView, "ai-improve-text"),
    ("translate", views.TranslateView, "ai-translate"),
    ("compose-campaign", views.ComposeCampaignView, "ai-compose-campaign"),
    ("optimize-channel", views.OptimizeChannelView, "ai-optimize-channel"),
    ("embeddings", views.EmbeddingsView, "ai-embeddings"),
    ("chat/completions", views.ChatCompletionsView, "ai-chat-completions"),
]

urlpatterns = [
    *(path(f"ai/{route}", view.as_view(), name=name) for route, view, name in _ROUTES),
    re_path(r"^ai/analyze-message/(?P<message_id>[^/]{1,64})$",
            views.AnalyzeMessageView.as_view(), name="ai-analyze-message"),
]
