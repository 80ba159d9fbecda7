"""AI routes under the cross-tenant test: analysing another organization's message is 404,
like an unknown id. (Conversation ids in bodies are covered in test_analysis_api.py.)"""

from messaging.models import Message
from platform_core.tenancy.context import tenant_context
from tests.cross_tenant import TenantRoute, register


def _message(tenant) -> str:
    with tenant_context(tenant.org):
        return Message.objects.create(organization=tenant.org, channel="sms",
                                      direction="inbound", to="+14155550100",
                                      body="Where is my order?", status="received").pk


register(TenantRoute(name="ai-analyze-message", detail_url="/api/v1/ai/analyze-message/{id}",
                     create=_message, methods=("POST",)))


def _agent(tenant) -> str:
    from agents.agent_models import Agent

    with tenant_context(tenant.org):
        return Agent.objects.create(organization=tenant.org, name="Bot", model="local").pk


register(TenantRoute(name="agents", list_url="/api/v1/agents",
                     detail_url="/api/v1/agents/{id}", create=_agent,
                     patch_body={"name": "Taken over"}, methods=("GET", "PATCH", "DELETE")))
register(TenantRoute(name="agents-deploy", detail_url="/api/v1/agents/{id}/deploy",
                     create=_agent, patch_body={"channel": "rcs"}, methods=("POST",)))
register(TenantRoute(name="agents-undeploy", detail_url="/api/v1/agents/{id}/undeploy",
                     create=_agent, methods=("POST",)))
