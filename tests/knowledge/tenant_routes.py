"""Knowledge routes under the cross-tenant test. Document routes carry their base in the
object id (`kb_…/documents/kbd_…`) so the shared test can address them with one `{id}`.
(A search never returning another organization's chunk is in test_retrieval_api.py.)"""

from knowledge.models import Document, KnowledgeBase
from platform_core.tenancy.context import tenant_context
from tests.cross_tenant import TenantRoute, register


def _kb(tenant) -> str:
    with tenant_context(tenant.org):
        return KnowledgeBase.objects.create(organization=tenant.org, name="Secret base").pk


def _document(tenant) -> str:
    with tenant_context(tenant.org):
        kb = KnowledgeBase.objects.create(organization=tenant.org, name="Secret base")
        doc = Document.objects.create(organization=tenant.org, knowledge_base=kb,
                                      name="secret", type="markdown", content="secret",
                                      status="failed", moderation_status="pending")
    return f"{kb.pk}/documents/{doc.pk}"


register(TenantRoute(name="knowledge-bases", list_url="/api/v1/knowledge-bases",
                     detail_url="/api/v1/knowledge-bases/{id}", create=_kb,
                     patch_body={"name": "stolen"}, methods=("GET", "PUT", "DELETE"),
                     sub_urls=("/api/v1/knowledge-bases/{id}/documents",
                               "/api/v1/knowledge-bases/{id}/staleness")))
register(TenantRoute(name="knowledge-documents",
                     detail_url="/api/v1/knowledge-bases/{id}", create=_document,
                     methods=("DELETE",)))
for _action in ("retry", "approve", "reject"):
    register(TenantRoute(name=f"knowledge-document-{_action}",
                         detail_url="/api/v1/knowledge-bases/{id}/" + _action,
                         create=_document, methods=("POST",)))


# Management routes (versions, rollback, publication, connectors).
def _connector(tenant) -> str:
    from knowledge.connectors.models import Connector

    with tenant_context(tenant.org):
        kb = KnowledgeBase.objects.create(organization=tenant.org, name="Secret base")
        connector = Connector(organization=tenant.org, knowledge_base=kb, kind="notion",
                              name="Secret wiki")
        connector.credentials = {"token": "secret"}
        connector.save()
    return f"{kb.pk}/connectors/{connector.pk}"


register(TenantRoute(name="knowledge-document-versions",
                     detail_url="/api/v1/knowledge-bases/{id}/versions", create=_document,
                     methods=("GET",),
                     sub_urls=("/api/v1/knowledge-bases/{id}/versions/diff?from=1&to=1",)))
register(TenantRoute(name="knowledge-document-rollback",
                     detail_url="/api/v1/knowledge-bases/{id}/rollback", create=_document,
                     patch_body={"version": 1}, methods=("POST",)))
register(TenantRoute(name="knowledge-document-publication",
                     detail_url="/api/v1/knowledge-bases/{id}/publication", create=_document,
                     patch_body={"is_public": True, "slug": "stolen"}, methods=("PATCH",)))
register(TenantRoute(name="knowledge-connectors-list",
                     detail_url="/api/v1/knowledge-bases/{id}/connectors", create=_kb,
                     methods=("GET",)))
register(TenantRoute(name="knowledge-connectors", detail_url="/api/v1/knowledge-bases/{id}",
                     create=_connector, patch_body={"name": "stolen"},
                     methods=("PATCH", "DELETE")))
register(TenantRoute(name="knowledge-connector-sync",
                     detail_url="/api/v1/knowledge-bases/{id}/sync", create=_connector,
                     methods=("POST",)))
def _org_document(tenant) -> str:
    """A document of the organization-wide base behind /ai/kb."""
    with tenant_context(tenant.org):
        kb = KnowledgeBase.objects.create(organization=tenant.org, name="Org base",
                                          is_org_default=True)
        return Document.objects.create(organization=tenant.org, knowledge_base=kb,
                                       name="secret", type="markdown", content="secret",
                                       status="failed").pk


register(TenantRoute(name="ai-kb-documents", list_url="/api/v1/ai/kb/documents",
                     detail_url="/api/v1/ai/kb/documents/{id}", create=_org_document,
                     methods=("GET", "DELETE")))
for _action in ("reindex", "verify"):
    register(TenantRoute(name=f"ai-kb-document-{_action}",
                         detail_url="/api/v1/ai/kb/documents/{id}/" + _action,
                         create=_org_document, methods=("POST",)))
