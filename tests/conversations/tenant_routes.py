"""Conversation, routing-agent and co-browse routes under the cross-tenant test."""

from conversations.models import Conversation
from conversations.routing_models import RoutingAgent
from platform_core.identity.models import User
from platform_core.tenancy.models import Membership, Role
from tests.cross_tenant import TenantRoute, register


def _conversation(tenant) -> str:
    conversation = Conversation.objects.for_organization(tenant.org).create(
        organization=tenant.org, contact_id="cnt_victim", channel="sms")
    return conversation.pk


def _routing_agent(tenant) -> str:
    user = User.objects.create_user(f"agent-{tenant.org.slug}@example.com",
                                    "Agent-Horse-7-battery")
    Membership.objects.for_organization(tenant.org).create(organization=tenant.org, user=user,
                                                           role=Role.AGENT)
    RoutingAgent.objects.for_organization(tenant.org).create(organization=tenant.org,
                                                             user_id=user.pk, capacity=2)
    return user.pk


register(TenantRoute(
    name="conversations", list_url="/api/v1/conversations",
    detail_url="/api/v1/conversations/{id}", create=_conversation, methods=("GET",),
    sub_urls=tuple(f"/api/v1/conversations/{{id}}/{sub}" for sub in (
        "messages", "activity", "sentiment", "prediction", "handoff/packet",
        "handoff/queue-position", "reply-sender", "side-conversations"))))
register(TenantRoute(
    name="routing-agents", list_url="/api/v1/routing/agents",
    detail_url="/api/v1/routing/agents/{id}", create=_routing_agent, methods=("GET", "PUT"),
    patch_body={"capacity": 9}))
register(TenantRoute(
    name="cobrowse", detail_url="/api/v1/cobrowse/{id}", create=_conversation,
    methods=("GET",)))
