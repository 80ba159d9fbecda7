"""Routing with offers (Document 2, 3 and 4.8): best fit (skills, lowest load, longest
idle), strict FIFO by waiting time, maintained load counters, accept / decline / stale /
expiry, concurrent accepts (exactly one wins), direct assignment, handoff."""

from __future__ import annotations

from collections import Counter
from datetime import timedelta

import pytest
import time_machine
from django.utils import timezone

from conversations import routing
from conversations.models import Conversation
from conversations.routing_models import RoutingAgent
from conversations.services import conversation_for_inbound
from platform_core.tenancy.context import tenant_context
from tests.concurrency import run_together

from .conftest import url

pytestmark = pytest.mark.django_db


def waiting_threads(tenant, n: int) -> list[Conversation]:
    """`n` conversations waiting for a human, oldest first (one minute apart)."""
    start = timezone.now() - timedelta(hours=5)
    rows = []
    with tenant_context(tenant.org):
        for i in range(n):
            rows.append(conversation_for_inbound(organization=tenant.org,
                                                 contact_id=f"cnt_{i:04d}", channel="sms",
                                                 at=start + timedelta(minutes=i), body="hi"))
    return rows


def agents_of(tenant, capacities: list[int]) -> list[RoutingAgent]:
    return [RoutingAgent.objects.for_organization(tenant.org).create(
        organization=tenant.org, user_id=f"usr_{i}", capacity=c)
        for i, c in enumerate(capacities)]


def loads(tenant) -> dict[str, int]:
    return dict(Counter(Conversation.objects.for_organization(tenant.org)
                        .filter(assignee_id__isnull=False).values_list("assignee_id", flat=True)))


def test_fifo_and_fairness_over_100_conversations_and_5_agents(tenant):
    threads = waiting_threads(tenant, 100)
    agents_of(tenant, [1, 2, 3, 4, 10])
    assert routing.route(tenant.org) == 20  # total capacity
    offered = list(Conversation.objects.for_organization(tenant.org)
                   .filter(assignment_status="offered").order_by("waiting_since"))
    # Strict FIFO: exactly the 20 who waited longest.
    assert [c.pk for c in offered] == [c.pk for c in threads[:20]]
    assert loads(tenant) == {"usr_0": 1, "usr_1": 2, "usr_2": 3, "usr_3": 4, "usr_4": 10}
    counters = {a.user_id: a.active_count for a in RoutingAgent.objects.for_organization(
        tenant.org)}
    assert counters == loads(tenant)  # the maintained counters match reality
    assert routing.route(tenant.org) == 0  # everyone is full
    # Capacity frees: the next in line (the 21st oldest) goes to the agent who freed it.
    with tenant_context(tenant.org):
        from conversations.services import conversation_close

        conversation_close(principal=None, conversation_id=offered[5].pk,
                           organization=tenant.org)
    freed = offered[5].assignee_id if offered[5].assignee_id else None
    assert routing.route(tenant.org) == 1
    nxt = Conversation.objects.for_organization(tenant.org).get(pk=threads[20].pk)
    assert nxt.assignment_status == "offered"
    assert nxt.assignee_id == freed


def test_lowest_load_spreads_in_proportion_to_capacity(tenant):
    waiting_threads(tenant, 100)
    capacities = [10, 20, 30, 40, 50]
    agents_of(tenant, capacities)
    assert routing.route(tenant.org) == 100
    held = loads(tenant)
    for i, capacity in enumerate(capacities):
        share = 100 * capacity / sum(capacities)
        assert abs(held[f"usr_{i}"] - share) <= 1, (i, held)


def test_equal_agents_longest_idle_first_then_balanced(tenant):
    agents = agents_of(tenant, [5, 5, 5, 5, 5])
    RoutingAgent.objects.for_organization(tenant.org).filter(pk=agents[0].pk).update(
        last_assigned_at=timezone.now() - timedelta(hours=1))
    RoutingAgent.objects.for_organization(tenant.org).filter(pk=agents[3].pk).update(
        last_assigned_at=timezone.now() - timedelta(hours=2))
    threads = waiting_threads(tenant, 10)
    assert routing.route(tenant.org) == 10
    rows = {c.pk: c.assignee_id for c in Conversation.objects.for_organization(tenant.org)}
    # Never-assigned agents first, then the longest idle (usr_3 before usr_0).
    assert [rows[t.pk] for t in threads[:5]] == ["usr_1", "usr_2", "usr_4", "usr_3", "usr_0"]
    assert sorted(Counter(rows.values()).values()) == [2, 2, 2, 2, 2]


def test_unavailable_agents_get_nothing(tenant, make_agent, inbound, commit):
    away = make_agent(availability="offline")
    cid = inbound("hello")["conversation_id"]
    data = tenant.client().get(url(cid)).json()["data"]
    assert data["assignee_id"] is None
    assert data["assignment_status"] == "none"
    with commit():
        response = away.client.put(f"/api/v1/routing/agents/{away.id}",
                                   {"availability": "available"}, format="json")
    assert response.status_code == 200, response.content
    data = tenant.client().get(url(cid)).json()["data"]
    assert (data["assignee_id"], data["assignment_status"]) == (away.id, "offered")
    assert data["offer_expires_at"] is not None


def test_accept_decline_stale_and_next_offer(tenant, make_agent, inbound, commit):
    first, second = make_agent(capacity=2), make_agent(capacity=2)
    cid = inbound("hello")["conversation_id"]
    offered_to = tenant.client().get(url(cid)).json()["data"]["assignee_id"]
    assert offered_to == first.id  # equal load, both never assigned: the lower id
    # Someone else cannot answer it; an API key is not an agent.
    stale = second.client.post(url(cid, "/assignment/accept"))
    assert stale.status_code == 422
    assert stale.json()["error"]["code"] == "ASSIGNMENT_OFFER_STALE"
    assert tenant.client().post(url(cid, "/assignment/accept")).status_code == 403
    with commit():
        declined = first.client.post(url(cid, "/assignment/decline"))
    assert declined.status_code == 200, declined.content
    nxt = declined.json()["data"]["next_offer"]
    assert nxt["agent_id"] == second.id
    assert nxt["expires_at"]
    # The decliner's answer is stale now; the next agent's accept is stamped.
    assert first.client.post(url(cid, "/assignment/accept")).status_code == 422
    accepted = second.client.post(url(cid, "/assignment/accept"))
    assert accepted.status_code == 200
    data = accepted.json()["data"]
    assert (data["assignment_status"], data["assignee_id"]) == ("accepted", second.id)
    assert data["accepted_at"] is not None
    assert data["waiting_since"] is None
    again = second.client.post(url(cid, "/assignment/accept"))
    assert again.json()["error"]["code"] == "ASSIGNMENT_OFFER_STALE"
    kinds = [r["kind"] for r in tenant.client().get(url(cid, "/activity")).json()["data"]]
    assert kinds[:4] == ["assignment_accepted", "offered", "assignment_declined", "offered"]
    counters = {a.user_id: a.active_count for a in RoutingAgent.objects.for_organization(
        tenant.org)}
    assert counters == {first.id: 0, second.id: 1}


def test_decline_by_everyone_leaves_it_waiting(tenant, make_agent, inbound, commit):
    only = make_agent()
    cid = inbound("hello")["conversation_id"]
    with commit():
        declined = only.client.post(url(cid, "/assignment/decline"))
    assert declined.json()["data"]["next_offer"] is None
    assert routing.route(tenant.org) == 0  # never offered again to who declined
    data = tenant.client().get(url(cid)).json()["data"]
    assert data["assignee_id"] is None
    assert data["waiting_since"] is not None


def test_offers_expire_and_pass_on(tenant, make_agent, inbound, settings):
    settings.CONVERSATIONS_OFFER_TTL_SECONDS = 30
    first, second = make_agent(), make_agent()
    cid = inbound("hello")["conversation_id"]
    assert tenant.client().get(url(cid)).json()["data"]["assignee_id"] == first.id
    assert routing.expire_offers() == 0
    with time_machine.travel(timezone.now() + timedelta(seconds=31)):
        assert first.client.post(url(cid, "/assignment/accept")).status_code == 422
        assert routing.expire_offers() == 1
    data = tenant.client().get(url(cid)).json()["data"]
    assert (data["assignee_id"], data["assignment_status"]) == (second.id, "offered")


@pytest.mark.django_db(transaction=True)
def test_concurrent_accepts_exactly_one_wins(tenant, make_agent, inbound):
    agent = make_agent()
    cid = inbound("hello")["conversation_id"]
    clients = [agent.client, agent.tenant.session_client(agent.user, "Agent-Horse-7-battery")]
    codes = run_together([lambda c=c: c.post(url(cid, "/assignment/accept")).status_code
                          for c in clients])
    assert sorted(codes) == [200, 422]


def test_assign_individual_agents_only(tenant, make_agent, inbound):
    agent = make_agent()
    client = tenant.client()
    cid = inbound("hello")["conversation_id"]
    other = make_agent()
    bad = client.post(url(cid, "/assign"), {"agent_id": "team_support"}, format="json")
    assert bad.status_code == 422
    assert bad.json()["error"]["code"] == "VALIDATION_ERROR"
    assert client.post(url(cid, "/assign"), {}, format="json").status_code in (400, 422)
    assigned = client.post(url(cid, "/assign"), {"agent_id": other.id}, format="json")
    data = assigned.json()["data"]
    assert (data["assignee_id"], data["assignment_status"]) == (other.id, "assigned")
    counters = {a.user_id: a.active_count for a in RoutingAgent.objects.for_organization(
        tenant.org)}
    assert counters == {agent.id: 0, other.id: 1}  # the pending offer was released
    unassigned = client.post(url(cid, "/assign"), {"agent_id": None}, format="json")
    assert unassigned.json()["data"]["assignee_id"] is None
    assert RoutingAgent.objects.for_organization(tenant.org).get(user_id=other.id).active_count == 0


def test_skills_come_before_load(tenant, make_agent, inbound, commit):
    generalist = make_agent(capacity=5)
    billing = make_agent(capacity=5, skills=["billing"])
    client = tenant.client()
    RoutingAgent.objects.for_organization(tenant.org).filter(user_id=billing.id).update(active_count=3)
    cid = inbound("I have a billing question")["conversation_id"]
    assert client.get(url(cid)).json()["data"]["assignee_id"] == generalist.id  # lower load
    client.post(url(cid, "/assign"), {"agent_id": None}, format="json")
    client.post(url(cid, "/agent/resume"))
    with commit():
        response = client.post(url(cid, "/handoff"), {"target_queue": "billing",
                                                      "reason_category": "customer_request"},
                               format="json")
    assert response.status_code == 200, response.content
    assert client.get(url(cid)).json()["data"]["assignee_id"] == billing.id


def test_handoff_packet_queue_position_resolve_resume(tenant, inbound):
    client = tenant.client()
    cids = [inbound(f"help {i}", sender=f"+1415555030{i}")["conversation_id"] for i in range(3)]
    not_ai = client.post(url(cids[0], "/handoff"), {}, format="json")
    assert not_ai.status_code == 409  # only an AI-led thread is handed off
    for cid in cids:
        assert client.post(url(cid, "/agent/resume")).json()["data"]["ai_led"] is True
    assert client.post(url(cids[0], "/agent/resume")).status_code == 409
    packets = []
    for cid in cids:
        response = client.post(url(cid, "/handoff"), {"target_queue": "vip",
                                                      "reason_category": "cant_understand"},
                               format="json")
        assert response.status_code == 200, response.content
        packets.append(response.json()["data"])
    first = packets[0]
    assert first["needs_human"] is True
    assert first["clearance_status"] == "queued"
    assert first["handoff_brief"].startswith("Handoff (cant_understand)")
    assert "help 0" in first["handoff_brief"]
    assert first["matched_operators"] == []
    assert first["target_queue"] == "vip"
    assert [p["queue_position"] for p in packets] == [1, 2, 3]
    bad = client.post(url(cids[0], "/handoff"), {"reason_category": "nope"}, format="json")
    assert bad.status_code in (400, 422)
    resolved = client.post(url(cids[0], "/handoff/resolve"))
    assert resolved.json()["data"]["handoff_status"] == "resolved"
    assert client.post(url(cids[0], "/handoff/resolve")).status_code == 409
    position = client.get(url(cids[2], "/handoff/queue-position")).json()["data"]
    assert position["queue_position"] == 2
    assert position["queue"] == "vip"
    packet = client.get(url(cids[0], "/handoff/packet")).json()["data"]
    assert packet["needs_human"] is False
    assert packet["queue_position"] is None
    resumed = client.post(url(cids[0], "/agent/resume")).json()["data"]
    assert resumed["ai_led"] is True


def test_handoff_with_an_agent_free_answers_the_offer_inline(tenant, make_agent, inbound):
    inbound("first")  # takes the agent's only slot
    agent = make_agent(capacity=2)
    client = tenant.client()
    cid = inbound("second", sender="+14155550999")["conversation_id"]
    client.post(url(cid, "/assign"), {"agent_id": None}, format="json")
    client.post(url(cid, "/agent/resume"))
    packet = client.post(url(cid, "/handoff"), {}, format="json").json()["data"]
    assert packet["clearance_status"] == "offered"
    assert packet["assignee_id"] == agent.id
    assert packet["reason_category"] == "manual"
    assert packet["target_queue"] is None
    assert packet["matched_operators"][0]["agent_id"] == agent.id
