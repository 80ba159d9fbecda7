"""The conversations scenarios of `make bench` (issue 17, "Done means").

- `inbox_list`: the inbox list with three filters (`status=open&channel=sms&priority=high`,
  limit 25) over BENCH_INBOX_ROWS conversations (default 100,000, seeded once in the bench
  organization, none waiting for routing), in process: the view's own path (filters,
  keyset page, the page's contacts, serialization), BENCH_INBOX_RUNS times (default 200)
  after 10 warm-up runs. Target: p95 under 30 ms.
- `routing_decisions`: routing passes (`conversations.routing.route`) over
  BENCH_ROUTING_THREADS waiting conversations (default 2,000) and 50 agents with mixed
  capacity, in a fresh organization each run; req/s = offers made per second (each offer is
  one best-fit decision, its counters, activity row and event).
"""

from __future__ import annotations

import time
from datetime import timedelta

from .base import BenchContext, Measurement, Scenario
from .env import scaled
from .event_scenarios import percentile

FILTERS = {"status": "open", "channel": "sms", "priority": "high"}


def _org(ctx: BenchContext):
    from platform_core.tenancy.models import Organization

    return Organization.objects.get(pk=ctx.seed.org_id)


def ensure_inbox(org, rows: int) -> int:
    """Seed `rows` conversations once (idempotent by count), 1 in 24 matching FILTERS."""
    from django.utils import timezone

    from conversations.models import Conversation

    rows_of = Conversation.objects.for_organization(org)
    existing = rows_of.count()
    if existing and not rows_of.filter(**FILTERS).exists():
        rows_of._raw_delete(rows_of.db)  # seeded by an older pattern (no children): again
        existing = 0
    now = timezone.now()
    channels, priorities = ("sms", "whatsapp", "email"), ("none", "low", "high", "urgent")
    batch: list[Conversation] = []
    for i in range(existing, rows):
        batch.append(Conversation(
            organization=org, contact_id=f"cnt_bench{i:08d}", channel=channels[i % 3],
            status="open" if i % 2 == 0 else "closed",
            priority=priorities[(i // 6) % 4], unread_count=i % 2,
            sentiment=("positive", "neutral", "negative")[i % 3],
            last_message_at=now - timedelta(seconds=i), last_message_preview=f"hello {i}",
            created_at=now - timedelta(seconds=i)))
        if len(batch) == 5000:
            Conversation.objects.for_organization(org).bulk_create(batch)
            batch = []
    if batch:
        Conversation.objects.for_organization(org).bulk_create(batch)
    return Conversation.objects.for_organization(org).count()


def _list_once(org) -> int:
    from django.test import RequestFactory
    from rest_framework.request import Request

    from conversations import selectors
    from conversations.api.serializers import ConversationSerializer
    from conversations.models import Conversation
    from platform_core.api.pagination import KeysetCursorPagination
    from platform_core.api.serialization import represent

    request = Request(RequestFactory().get("/api/v1/conversations", {**FILTERS,
                                                                    "limit": "25"}))
    queryset = selectors.conversations_filtered(
        Conversation.objects.for_organization(org), request.query_params, org)
    paginator = KeysetCursorPagination()
    rows = paginator.paginate_queryset(queryset, request)
    contacts = selectors.contacts_by_id(org, [r.contact_id for r in rows])
    data = represent(ConversationSerializer, rows, many=True, context={"contacts": contacts})
    return len(data)


class InboxList(Scenario):
    name = "inbox_list"
    needs_server = False

    def __init__(self):
        self.rows = scaled("BENCH_INBOX_ROWS", 100_000, minimum=1000)
        self.runs = scaled("BENCH_INBOX_RUNS", 200, minimum=10)
        self.title = "Inbox list, 3 filters, in-process"

    def prepare(self, ctx: BenchContext) -> None:
        from platform_core.tenancy.context import tenant_context

        org = _org(ctx)
        with tenant_context(org):
            ctx.values["inbox_rows"] = ensure_inbox(org, self.rows)
            if _list_once(org) != 25:
                raise AssertionError("the three filters do not fill a page")
        self.title = (f"Inbox list over {ctx.values['inbox_rows']:,} conversations, 3 filters,"
                      " in-process")

    def warm_up(self, ctx: BenchContext, *, seconds: int) -> None:
        """The measurement does its own warm-up runs."""

    def measure(self, ctx: BenchContext, *, seconds: int) -> Measurement:
        from platform_core.tenancy.context import tenant_context

        org = _org(ctx)
        times = []
        with tenant_context(org):
            for _ in range(10):
                _list_once(org)
            started = time.monotonic()
            for _ in range(self.runs):
                t0 = time.perf_counter()
                _list_once(org)
                times.append((time.perf_counter() - t0) * 1000)
            elapsed = time.monotonic() - started
        p95 = percentile(times, 95)
        return Measurement(
            scenario=self.name, title=self.title, requests_per_second=self.runs / elapsed,
            p50_ms=percentile(times, 50), p99_ms=percentile(times, 99), requests=self.runs,
            figures={"p95_ms": p95 or 0.0},
            notes=f"p95 {p95:.2f} ms (target < 30 ms); filters {FILTERS}, limit 25")


class RoutingDecisions(Scenario):
    name = "routing_decisions"
    needs_server = False

    def __init__(self):
        self.threads = scaled("BENCH_ROUTING_THREADS", 2000, minimum=100)
        self.title = "Routing decisions, in-process (req/s = offers/s)"

    def warm_up(self, ctx: BenchContext, *, seconds: int) -> None:
        """Each measurement seeds a fresh organization."""

    def measure(self, ctx: BenchContext, *, seconds: int) -> Measurement:
        from django.utils import timezone

        from conversations import routing
        from conversations.models import Conversation
        from conversations.routing_models import RoutingAgent
        from platform_core.tenancy.context import tenant_context
        from platform_core.tenancy.models import Organization

        slug = f"bench-routing-{int(time.time())}"
        org = Organization.objects.create(name="Bench routing", slug=slug)
        try:
            with tenant_context(org):
                start = timezone.now() - timedelta(hours=1)
                Conversation.objects.for_organization(org).bulk_create([
                    Conversation(organization=org, contact_id=f"cnt_r{i:06d}", channel="sms",
                                 waiting_since=start + timedelta(milliseconds=i))
                    for i in range(self.threads)])
                capacities = [10, 20, 40, 80] * 12 + [200, 400]
                RoutingAgent.objects.for_organization(org).bulk_create([
                    RoutingAgent(organization=org, user_id=f"usr_bench{i:03d}", capacity=c)
                    for i, c in enumerate(capacities)])
                offers, passes = 0, 0
                started = time.perf_counter()
                while True:
                    made = routing.route(org)
                    passes += 1
                    offers += made
                    if not made:
                        break
                elapsed = time.perf_counter() - started
        finally:
            Organization.objects.filter(pk=org.pk).delete()
        expected = min(self.threads, sum(capacities))
        return Measurement(
            scenario=self.name, title=self.title, requests_per_second=offers / elapsed,
            requests=offers, errors=int(offers != expected),
            notes=(f"{offers:,} offers in {passes} passes over {self.threads:,} waiting threads,"
                   f" 50 agents (capacity {sum(capacities):,}), {elapsed:.2f} s"))


CONVERSATION_SCENARIOS: list[Scenario] = [InboxList(), RoutingDecisions()]
