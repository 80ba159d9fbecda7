"""Insights endpoints (Document 3, 4.4). GETs read inside `replica_reads()` (the replica
when configured); PUTs write to the primary. Views parse the query (insights/window.py),
call a selector or service, and answer the dict."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.response import Response

from platform_core.api.views import PlatformAPIView
from platform_core.errors import APIError, validation_error

from .. import services
from ..db import replica_reads
from ..selectors import agents, budget, compare, economics, spend
from ..window import Issues, choice, integer, parse_window

READ, WRITE = "insights:read", "insights:write"
MAX_COMPARED = 50
ID_MAX = 40

P_FROM = OpenApiParameter("from", OpenApiTypes.DATETIME, description=(
    "ISO 8601 with offset; default: `to` minus 30 days (the last 30 days without either)."))
P_TO = OpenApiParameter("to", OpenApiTypes.DATETIME, description=(
    "ISO 8601 with offset, after `from`; the window is at most 365 days."))
P_GRANULARITY = OpenApiParameter("granularity", OpenApiTypes.STR, enum=["day", "hour"],
                                 description="Buckets in the organization's time zone; "
                                             "`hour` covers at most 14 days (default 7).")
P_AGENT = OpenApiParameter("agentId", OpenApiTypes.STR, description=(
    "Only this agent (404 NOT_FOUND when the organization has no such agent nor history)."))


def _limit(default: int, high: int) -> OpenApiParameter:
    return OpenApiParameter("limit", OpenApiTypes.INT, description=f"1-{high}, default "
                                                                   f"{default}.")


def _object_body(request) -> dict[str, Any]:
    if not isinstance(request.data, dict):
        raise validation_error("body", "The body is a JSON object.")
    return request.data


class InsightsView(PlatformAPIView):
    required_scopes: ClassVar[dict[str, str]] = {"GET": READ, "PUT": WRITE}

    def read(self, compute: Callable[[], dict[str, Any]]) -> Response:
        with replica_reads():
            return Response(compute())

    def query(self, *, granular: bool = False):
        issues = Issues()
        window = parse_window(self.request.query_params, self.organization, issues,
                              granular=granular)
        return issues, window

    def agent_param(self, issues: Issues) -> str | None:
        raw = self.request.query_params.get("agentId")
        if raw is None or raw == "":
            return None
        if len(raw) > ID_MAX:
            issues.add("agentId", f"`agentId` is at most {ID_MAX} characters.")
            return None
        return raw

    def require_agent(self, agent_id: str | None) -> None:
        if agent_id is not None:
            with replica_reads():
                if not agents.agent_known(self.organization, agent_id):
                    raise APIError("NOT_FOUND")


class OverviewView(InsightsView):
    @extend_schema(operation_id="insights_llm_spend_overview", responses=OpenApiTypes.OBJECT,
                   description="Today, month to date (with projection and the change against "
                               "the same span of last month) and the last 7 days, in the "
                               "organization's time zone. Nulls when not computable.")
    def get(self, request):
        return self.read(lambda: spend.overview(self.organization))


class SummaryView(InsightsView):
    @extend_schema(operation_id="insights_llm_spend_summary", responses=OpenApiTypes.OBJECT,
                   parameters=[P_FROM, P_TO, OpenApiParameter(
                       "groupBy", OpenApiTypes.STR, enum=["agent", "model", "conversation"]),
                       _limit(50, 200)])
    def get(self, request):
        issues, window = self.query()
        group_by = choice(request.query_params, "groupBy", ("agent", "model", "conversation"),
                          default="agent", issues=issues)
        limit = integer(request.query_params, "limit", default=50, low=1, high=200,
                        issues=issues)
        issues.raise_if_any()
        return self.read(lambda: spend.summary(self.organization, window, group_by=group_by,
                                               limit=limit))


class TimeseriesView(InsightsView):
    @extend_schema(operation_id="insights_llm_spend_timeseries", responses=OpenApiTypes.OBJECT,
                   parameters=[P_FROM, P_TO, P_GRANULARITY])
    def get(self, request):
        issues, window = self.query(granular=True)
        issues.raise_if_any()
        return self.read(lambda: spend.timeseries(self.organization, window))


class TopConversationsView(InsightsView):
    @extend_schema(operation_id="insights_llm_spend_top_conversations",
                   responses=OpenApiTypes.OBJECT, parameters=[P_FROM, P_TO, _limit(50, 50)])
    def get(self, request):
        issues, window = self.query()
        limit = integer(request.query_params, "limit", default=50, low=1, high=50,
                        issues=issues)
        issues.raise_if_any()
        return self.read(lambda: spend.top_conversations(self.organization, window,
                                                         limit=limit))


class ByFeatureView(InsightsView):
    @extend_schema(operation_id="insights_llm_spend_by_feature", responses=OpenApiTypes.OBJECT,
                   parameters=[P_FROM, P_TO])
    def get(self, request):
        issues, window = self.query()
        issues.raise_if_any()
        return self.read(lambda: spend.by_feature(self.organization, window))


class BudgetView(InsightsView):
    @extend_schema(operation_id="insights_llm_spend_budget", responses=OpenApiTypes.OBJECT)
    def get(self, request):
        return self.read(lambda: budget.budget_of(self.organization))

    @extend_schema(operation_id="insights_llm_spend_budget_update", request=OpenApiTypes.OBJECT,
                   responses=OpenApiTypes.OBJECT, description=(
                       "Read-merge-write: only sent fields change. Out-of-range or mistyped "
                       "values are dropped (listed in `dropped`). `channel_thresholds` merges "
                       "per channel; a null threshold removes that channel. Reaching "
                       "`alert_at_percent` of a cap emits `ai.budget.alert` once per period."))
    def put(self, request):
        body = _object_body(request)
        return Response(services.budget_update(principal=self.principal, body=body,
                                               request=request))


class RoiView(InsightsView):
    @extend_schema(operation_id="insights_agent_roi", responses=OpenApiTypes.OBJECT,
                   parameters=[P_FROM, P_TO, _limit(50, 200)])
    def get(self, request):
        issues, window = self.query()
        limit = integer(request.query_params, "limit", default=50, low=1, high=200,
                        issues=issues)
        issues.raise_if_any()
        return self.read(lambda: agents.roi(self.organization, window, limit=limit))


class RoiTimeseriesView(InsightsView):
    @extend_schema(operation_id="insights_agent_roi_timeseries", responses=OpenApiTypes.OBJECT,
                   parameters=[P_FROM, P_TO, P_GRANULARITY, P_AGENT])
    def get(self, request):
        issues, window = self.query(granular=True)
        agent_id = self.agent_param(issues)
        issues.raise_if_any()
        self.require_agent(agent_id)
        return self.read(lambda: agents.roi_timeseries(self.organization, window,
                                                       agent_id=agent_id))


class RoiConfigView(InsightsView):
    @extend_schema(operation_id="insights_agent_roi_config", responses=OpenApiTypes.OBJECT)
    def get(self, request):
        return self.read(lambda: agents.roi_config(self.organization))

    @extend_schema(operation_id="insights_agent_roi_config_update", request=OpenApiTypes.OBJECT,
                   responses=OpenApiTypes.OBJECT, description=(
                       "Read-merge-write of `default_outcome_value_cents` (integer or null) "
                       "and `per_rubric_value_cents` (merged per rubric id, null removes one; "
                       "at most 500)."))
    def put(self, request):
        services.roi_config_update(principal=self.principal, body=_object_body(request),
                                   request=request)
        return Response(agents.roi_config(self.organization))


class ContainmentView(InsightsView):
    @extend_schema(operation_id="insights_containment", responses=OpenApiTypes.OBJECT,
                   parameters=[P_FROM, P_TO, _limit(50, 200)])
    def get(self, request):
        issues, window = self.query()
        limit = integer(request.query_params, "limit", default=50, low=1, high=200,
                        issues=issues)
        issues.raise_if_any()
        return self.read(lambda: agents.containment(self.organization, window, limit=limit))


class ContainmentTimeseriesView(InsightsView):
    @extend_schema(operation_id="insights_containment_timeseries",
                   responses=OpenApiTypes.OBJECT,
                   parameters=[P_FROM, P_TO, P_GRANULARITY, P_AGENT])
    def get(self, request):
        issues, window = self.query(granular=True)
        agent_id = self.agent_param(issues)
        issues.raise_if_any()
        self.require_agent(agent_id)
        return self.read(lambda: agents.containment_timeseries(self.organization, window,
                                                               agent_id=agent_id))


def _agent_ids(params, issues: Issues) -> list[str]:
    raw = params.getlist("agentIds") + params.getlist("ids") + params.getlist("agentId")
    ids: list[str] = []
    for chunk in raw:
        for part in chunk.split(","):
            part = part.strip()
            if part and part not in ids:
                ids.append(part)
    if len(ids) < 2:
        issues.add("agentIds", "Compare at least two agents: `agentIds=agt_a,agt_b`.")
    elif len(ids) > MAX_COMPARED or any(len(i) > ID_MAX for i in ids):
        issues.add("agentIds", f"At most {MAX_COMPARED} agent ids of at most {ID_MAX} "
                               "characters.")
    return ids


class ComparisonView(InsightsView):
    @extend_schema(operation_id="insights_agent_comparison", responses=OpenApiTypes.OBJECT,
                   parameters=[P_FROM, P_TO, OpenApiParameter(
                       "agentIds", OpenApiTypes.STR, required=True,
                       description="Comma-separated agent ids (at least two; unknown ones "
                                   "are dropped).")])
    def get(self, request):
        issues, window = self.query()
        ids = _agent_ids(request.query_params, issues)
        issues.raise_if_any()
        return self.read(lambda: compare.comparison(self.organization, window, agent_ids=ids))


class BenchmarksView(InsightsView):
    @extend_schema(operation_id="insights_agent_benchmarks", responses=OpenApiTypes.OBJECT,
                   parameters=[P_FROM, P_TO, P_AGENT, _limit(50, 200)])
    def get(self, request):
        issues, window = self.query()
        agent_id = self.agent_param(issues)
        limit = integer(request.query_params, "limit", default=50, low=1, high=200,
                        issues=issues)
        issues.raise_if_any()
        self.require_agent(agent_id)
        return self.read(lambda: compare.benchmarks(self.organization, window,
                                                    agent_id=agent_id, limit=limit))


class CostEconomicsView(InsightsView):
    @extend_schema(operation_id="insights_cost_economics", responses=OpenApiTypes.OBJECT,
                   parameters=[P_FROM, P_TO])
    def get(self, request):
        issues, window = self.query()
        issues.raise_if_any()
        return self.read(lambda: economics.cost_economics(self.organization, window))


class CostEconomicsConfigView(InsightsView):
    @extend_schema(operation_id="insights_cost_economics_config", responses=OpenApiTypes.OBJECT)
    def get(self, request):
        return self.read(lambda: economics.cost_config(self.organization))

    @extend_schema(operation_id="insights_cost_economics_config_update",
                   request=OpenApiTypes.OBJECT, responses=OpenApiTypes.OBJECT, description=(
                       "Read-merge-write of the rates (integer cents 0-100,000,000,000); an "
                       "explicit null resets a rate to the platform default."))
    def put(self, request):
        services.cost_config_update(principal=self.principal, body=_object_body(request),
                                    request=request)
        return Response(economics.cost_config(self.organization))
