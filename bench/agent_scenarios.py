"""The AI agents scenario of `make bench` (issue 18, "Done means"), in-process (no server):

- `agent_reply`: latency of a deployed agent's answer with the local engine, from the
  inbound message entering the pipeline (`messaging.inbound.pipeline.receive_message`, as
  a provider webhook or the sandbox endpoint calls it) to the outbound reply handed to the
  sandbox provider: contact and conversation, the agent taking the thread, the reply task
  (run eagerly here), retrieval over a small knowledge base (embeddings + full text), the
  local model call, metering, the send through messaging. Each message comes from a new
  customer (a new conversation), the usual first-contact path. p50 and p95 (p95 in notes
  and `figures`).
"""

from __future__ import annotations

import statistics
import time

from .base import BenchContext, Measurement, Scenario

NUMBER = "+15005550006"
DOCS = {
    "Refunds": "Customers can get a refund within 30 days of purchase. The money goes back "
               "to the original card within five business days.",
    "Shipping": "Standard delivery takes three to five days. Express delivery arrives the "
                "next business day for orders placed before noon.",
    "Passwords": "To reset your password, open Settings, choose Security and press Reset "
                 "password. A link is emailed to you.",
}
QUESTIONS = ["How many days do I have to ask for a refund?",
             "How long does standard delivery take?",
             "How do I reset my password?"]


def _percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))]


class AgentReply(Scenario):
    name = "agent_reply"
    title = "Agent reply latency, local engine (inbound message to outbound reply, in-process)"
    needs_server = False

    def __init__(self) -> None:
        self._seq = 0

    def prepare(self, ctx: BenchContext) -> None:
        from agents import agent_services
        from config.celery import app
        from knowledge import services as kb_services
        from platform_core.identity import services as identity
        from platform_core.identity.principal import Principal
        from platform_core.tenancy.context import tenant_context

        app.conf.task_always_eager = True  # the reply task inline, in this process only
        slug = f"bench-agents-{int(time.time())}"
        org, *_ = identity.organization_create(name="Bench agents", slug=slug,
                                               owner_email=f"owner@{slug}.test", sandbox=True)
        principal = Principal(kind="internal", organization=org, role="owner")
        with tenant_context(org):
            kb = kb_services.kb_create(principal=principal, name="Help")
            for name, text in DOCS.items():
                kb_services.document_create(principal=principal, kb=kb, name=name,
                                            kind="markdown", source_type="markdown",
                                            content=f"# {name}\n\n{text}",
                                            size_bytes=len(text))
            agent = agent_services.agent_create(principal=principal, body={
                "name": "Bench agent", "model": "local",
                "system_prompt": "You are the store assistant."})
            agent_services.agent_deploy(principal=principal, agent_id=agent.pk,
                                        body={"channel": "sms", "phone_number": NUMBER})
        ctx.values["agent_org_id"] = org.pk

    def _one(self, org, question: str) -> tuple[float, str]:
        from messaging.inbound.items import InboundItem
        from messaging.inbound.pipeline import receive_message
        from messaging.models import Message
        from platform_core.ids import new_id
        from platform_core.tenancy.context import tenant_context

        self._seq += 1
        item = InboundItem(channel="sms", from_=f"+1415{2_000_000 + self._seq % 7_000_000:07d}",
                           to=NUMBER, body=question, provider="sandbox",
                           provider_message_id=new_id("sbxin"))
        with tenant_context(org):
            started = time.perf_counter()
            message = receive_message(organization=org, item=item)
            elapsed = time.perf_counter() - started
            reply = (Message.objects.for_organization(org)
                     .filter(conversation_id=message.conversation_id, direction="outbound")
                     .values_list("body", flat=True).first())
        return elapsed, reply or ""

    def _org(self, ctx: BenchContext):
        from platform_core.tenancy.models import Organization

        return Organization.objects.get(pk=ctx.values["agent_org_id"])

    def check(self, ctx: BenchContext) -> None:
        _elapsed, reply = self._one(self._org(ctx), QUESTIONS[0])
        if "30 days" not in reply or "(Source: Refunds)" not in reply:
            raise AssertionError(f"unexpected agent reply {reply!r}")

    def warm_up(self, ctx: BenchContext, *, seconds: int) -> None:
        org = self._org(ctx)
        for question in QUESTIONS:
            self._one(org, question)

    def measure(self, ctx: BenchContext, *, seconds: int) -> Measurement:
        org = self._org(ctx)
        times, errors, started = [], 0, time.perf_counter()
        while time.perf_counter() - started < max(seconds, 5) or len(times) < 20:
            elapsed, reply = self._one(org, QUESTIONS[len(times) % len(QUESTIONS)])
            times.append(elapsed)
            errors += int("(Source:" not in reply)
        p95 = _percentile(times, 0.95) * 1000
        return Measurement(
            scenario=self.name, title=self.title,
            requests_per_second=len(times) / (time.perf_counter() - started),
            p50_ms=statistics.median(times) * 1000, p99_ms=_percentile(times, 0.99) * 1000,
            requests=len(times), errors=errors, figures={"p95_ms": round(p95, 1)},
            notes=f"p95 {p95:.1f} ms over {len(times)} replies (one at a time, each a new "
                  f"conversation; retrieval over {len(DOCS)} documents)")


AGENT_SCENARIOS: list[Scenario] = [AgentReply()]
