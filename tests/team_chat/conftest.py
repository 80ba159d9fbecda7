"""Fixtures of the team-chat tests: people of one organization with dashboard sessions."""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import pytest
from rest_framework.test import APIClient

from platform_core.identity import services
from platform_core.identity.models import User
from platform_core.identity.principal import Principal
from platform_core.tenancy.context import tenant_context

PASSWORD = "Correct-Horse-9-battery"
_seq = itertools.count(1)


@dataclass
class Person:
    user: User
    client: APIClient

    @property
    def id(self) -> str:
        return self.user.pk


def add_person(tenant, name: str, role: str = "agent") -> Person:
    owner = Principal(kind="session", organization=tenant.org, role="owner",
                      user_id=tenant.owner.pk)
    with tenant_context(tenant.org):
        membership = services.user_invite(
            principal=owner, email=f"{name}-{next(_seq)}-{tenant.org.slug}@example.com",
            name=name.title(), role=role, password=PASSWORD)
    return Person(membership.user, tenant.session_client(membership.user, PASSWORD))


@pytest.fixture
def alice(tenant) -> Person:
    """The organization's owner, through a dashboard session."""
    return Person(tenant.owner, tenant.session_client())


@pytest.fixture
def bob(tenant) -> Person:
    return add_person(tenant, "bob")


@pytest.fixture
def carol(tenant) -> Person:
    return add_person(tenant, "carol")


def make_channel(person: Person, name: str = "general", *members: Person) -> str:
    response = person.client.post("/api/v1/team-chat/channels", {"name": name}, format="json")
    assert response.status_code == 201, response.content
    channel_id = response.json()["data"]["id"]
    for member in members:
        added = person.client.post(f"/api/v1/team-chat/channels/{channel_id}/members",
                                   {"user_id": member.id}, format="json")
        assert added.status_code == 201, added.content
    return channel_id


def post(person: Person, channel_id: str, body: str, **extra) -> dict:
    response = person.client.post(f"/api/v1/team-chat/channels/{channel_id}/messages",
                                  {"body": body, **extra}, format="json")
    assert response.status_code == 201, response.content
    return response.json()["data"]
