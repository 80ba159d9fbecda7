"""Insights routes under the cross-tenant test: another organization's agent in `agentId`
answers 404 like an unknown id."""

from agents.agent_models import Agent
from platform_core.tenancy.context import tenant_context
from tests.cross_tenant import TenantRoute, register


def _agent(tenant) -> str:
    with tenant_context(tenant.org):
        return Agent.objects.create(organization=tenant.org, name="Insightful",
                                    model="gpt-4o-mini").pk


for name, path in (("insights-roi-timeseries", "agent-roi/timeseries"),
                   ("insights-containment-timeseries", "containment/timeseries"),
                   ("insights-benchmarks", "agent-benchmarks")):
    register(TenantRoute(name=name, detail_url=f"/api/v1/insights/{path}?agentId={{id}}",
                         create=_agent, methods=("GET",)))
