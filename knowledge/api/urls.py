"""Routes under /api/v1/knowledge-bases (Document 3, 4.3) and /api/v1/ai/kb (4.2).

Only the finished operations are routed; see docs/knowledge.md for what is still to come.
"""

from django.urls import path

from . import kb_views, views
from . import manage_views as mv

K = views.KnowledgeBaseViewSet
D = views.DocumentViewSet
DOC = "knowledge-bases/<str:kb_pk>/documents/<str:pk>"

urlpatterns = [
    path("knowledge-bases", K.as_view({"get": "list", "post": "create"}),
         name="knowledge-base-list"),
    path("knowledge-bases/<str:pk>", K.as_view({"get": "retrieve", "put": "update",
                                                "delete": "destroy"}),
         name="knowledge-base-detail"),
    path("knowledge-bases/<str:pk>/staleness", K.as_view({"get": "staleness"}),
         name="knowledge-base-staleness"),
    path("knowledge-bases/<str:kb_pk>/documents", D.as_view({"get": "list", "post": "create"}),
         name="knowledge-document-list"),
    path(DOC, D.as_view({"delete": "destroy"}), name="knowledge-document-detail"),
    path(f"{DOC}/retry", D.as_view({"post": "retry"}), name="knowledge-document-retry"),
    path(f"{DOC}/approve", D.as_view({"post": "approve"}), name="knowledge-document-approve"),
    path(f"{DOC}/reject", D.as_view({"post": "reject"}), name="knowledge-document-reject"),
    path(f"{DOC}/versions", mv.DocumentManageViewSet.as_view({"get": "versions"}),
         name="knowledge-document-versions"),
    path(f"{DOC}/versions/diff", mv.DocumentManageViewSet.as_view({"get": "diff"}),
         name="knowledge-document-versions-diff"),
    path(f"{DOC}/rollback", mv.DocumentManageViewSet.as_view({"post": "rollback"}),
         name="knowledge-document-rollback"),
    path(f"{DOC}/publication", mv.DocumentManageViewSet.as_view({"patch": "publication"}),
         name="knowledge-document-publication"),
    path("knowledge-bases/<str:kb_pk>/connectors",
         mv.ConnectorViewSet.as_view({"get": "list", "post": "create"}),
         name="knowledge-connector-list"),
    path("knowledge-bases/<str:kb_pk>/connectors/<str:pk>",
         mv.ConnectorViewSet.as_view({"patch": "partial_update", "delete": "destroy"}),
         name="knowledge-connector-detail"),
    path("knowledge-bases/<str:kb_pk>/connectors/<str:pk>/sync",
         mv.ConnectorViewSet.as_view({"post": "sync"}), name="knowledge-connector-sync"),
    path("ai/kb/staleness", mv.KBStalenessView.as_view(), name="ai-kb-staleness"),
    path("ai/kb/connectors", mv.ConnectorCatalogView.as_view(), name="ai-kb-connectors"),
    path("ai/kb/connectors/<str:pk>", mv.ConnectorCatalogDetailView.as_view(),
         name="ai-kb-connector-detail"),
    path("ai/kb/documents", kb_views.OrgKBDocumentViewSet.as_view(
        {"get": "list", "post": "create"}), name="ai-kb-document-list"),
    path("ai/kb/documents/<str:pk>", kb_views.OrgKBDocumentViewSet.as_view(
        {"get": "retrieve", "delete": "destroy"}), name="ai-kb-document-detail"),
    path("ai/kb/documents/<str:pk>/reindex", kb_views.OrgKBDocumentViewSet.as_view(
        {"post": "reindex"}), name="ai-kb-document-reindex"),
    path("ai/kb/documents/<str:pk>/verify", kb_views.OrgKBDocumentViewSet.as_view(
        {"post": "verify"}), name="ai-kb-document-verify"),
    path("ai/kb/import/help-center", kb_views.HelpCenterImportView.as_view(),
         name="ai-kb-import-help-center"),
    path("ai/kb/search", views.KBSearchView.as_view(), name="ai-kb-search"),
    path("ai/kb/answers", views.KBAnswersView.as_view(), name="ai-kb-answers"),
]
