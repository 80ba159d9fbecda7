"""Fixtures of the conversations tests: inbound messages through the sandbox pipeline,
members who are routing agents (with their own signed-in clients)."""

from __future__ import annotations

import itertools

import pytest

from platform_core.identity.models import User
from platform_core.tenancy.models import Membership, Role

INBOUND = "/api/v1/sandbox/inbound"
BUSINESS = "+14155550100"
CONVERSATIONS = "/api/v1/conversations"
_seq = itertools.count(1)
PASSWORD = "Agent-Horse-7-battery"


@pytest.fixture
def commit(django_capture_on_commit_callbacks):
    """`with commit(): ...` runs the after-commit work of the block (routing, fan-out)."""
    return lambda: django_capture_on_commit_callbacks(execute=True)


@pytest.fixture
def inbound(tenant, commit):
    """Receive a message from `sender` (a phone) through POST /api/v1/sandbox/inbound;
    returns the message representation (with `conversation_id`, `contact_id`)."""

    def receive(body: str, *, sender: str = "+14155550123", channel: str = "sms",
                to: str = BUSINESS, client=None) -> dict:
        with commit():
            response = (client or tenant.client()).post(
                INBOUND, {"channel": channel, "from": sender, "to": to, "body": body},
                format="json")
        assert response.status_code == 201, response.content
        return response.json()["data"]

    return receive


class Agent:
    def __init__(self, tenant, user: User) -> None:
        self.tenant, self.user, self.id = tenant, user, user.pk
        self._client = None

    @property
    def client(self):
        if self._client is None:
            self._client = self.tenant.session_client(self.user, PASSWORD)
        return self._client


@pytest.fixture
def make_agent(tenant, commit):
    """A member (role agent) with a routing profile: `make_agent(capacity=2, skills=[...])`."""

    def make(*, capacity: int = 3, skills: list[str] | None = None,
             availability: str = "available", org_tenant=None) -> Agent:
        owner = org_tenant or tenant
        user = User.objects.create_user(f"agent-{next(_seq)}@example.com", PASSWORD)
        Membership.objects.for_organization(owner.org).create(organization=owner.org,
                                                              user=user, role=Role.AGENT)
        with commit():
            response = owner.client().put(f"/api/v1/routing/agents/{user.pk}", {
                "capacity": capacity, "skills": skills or [], "availability": availability,
            }, format="json")
        assert response.status_code == 201, response.content
        return Agent(owner, user)

    return make


def contact(tenant, *, phone: str = "+14155550123", email: str | None = None,
            first_name: str = "") -> str:
    body = {"phone": phone}
    if email:
        body["email"] = email
    if first_name:
        body["first_name"] = first_name
    response = tenant.client().post("/api/v1/contacts", body, format="json")
    assert response.status_code == 201, response.content
    return response.json()["data"]["id"]


def url(conversation_id: str, suffix: str = "") -> str:
    return f"{CONVERSATIONS}/{conversation_id}{suffix}"
