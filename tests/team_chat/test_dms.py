"""Direct messages over HTTP: sending, listing, previews, unread counts, participants only."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.team_chat.conftest import add_person

pytestmark = pytest.mark.django_db

BASE = "/api/v1/team-chat"


def dm(sender, to, body):
    response = sender.client.post(f"{BASE}/dms", {"user_id": to.id, "body": body}, format="json")
    assert response.status_code == 201, response.content
    return response.json()["data"]


def test_dm_thread_is_shared_by_the_pair(alice, bob):
    first = dm(alice, bob, "hi bob")
    reply = dm(bob, alice, "hi alice")
    assert first["thread_id"].startswith("dmt_")
    assert first["thread_id"] == reply["thread_id"]
    assert first["channel_id"] is None
    messages = alice.client.get(f"{BASE}/dms/{first['thread_id']}/messages").json()["data"]
    assert [m["body"] for m in messages] == ["hi alice", "hi bob"]  # newest first
    assert messages[0]["sender_user_id"] == bob.id


def test_dm_list_most_recent_first_with_preview_and_unread(alice, bob, carol):
    with_bob = dm(alice, bob, "old")["thread_id"]
    with_carol = dm(carol, alice, "c" * 300)["thread_id"]
    listed = alice.client.get(f"{BASE}/dms").json()["data"]
    assert [t["thread_id"] for t in listed] == [with_carol, with_bob]
    assert listed[0]["last_message_preview"] == "c" * 140
    assert listed[0]["other_user_id"] == carol.id
    assert (listed[0]["unread_count"], listed[1]["unread_count"]) == (1, 0)
    dm(bob, alice, "newer")
    listed = alice.client.get(f"{BASE}/dms").json()["data"]
    assert [t["thread_id"] for t in listed] == [with_bob, with_carol]
    assert listed[0]["unread_count"] == 1
    read = alice.client.post(f"{BASE}/dms/{with_bob}/read", {}, format="json")
    assert read.json()["data"]["unread_count"] == 0
    assert alice.client.get(f"{BASE}/dms").json()["data"][0]["unread_count"] == 0
    # Carol is not in alice-bob's thread.
    assert [t["thread_id"] for t in carol.client.get(f"{BASE}/dms").json()["data"]] == [
        with_carol]


def test_dm_unread_count_is_capped(alice, bob, settings):
    settings.TEAM_CHAT_UNREAD_CAP = 2
    for i in range(4):
        dm(bob, alice, f"m{i}")
    assert alice.client.get(f"{BASE}/dms").json()["data"][0]["unread_count"] == 2


def test_only_participants_see_a_thread(alice, bob, carol):
    thread = dm(alice, bob, "private")["thread_id"]
    for method, url, body in (
        ("get", f"{BASE}/dms/{thread}/messages", None),
        ("post", f"{BASE}/dms/{thread}/messages", {"body": "x"}),
        ("post", f"{BASE}/dms/{thread}/read", {}),
    ):
        response = getattr(carol.client, method)(url, body, format="json")
        assert response.status_code == 404, (url, response.content)
        assert response.json()["error"]["code"] == "NOT_FOUND"
    replied = bob.client.post(f"{BASE}/dms/{thread}/messages", {"body": "ok"}, format="json")
    assert replied.status_code == 201


def test_dm_validation(alice, bob, other_tenant):
    for body in ({}, {"user_id": bob.id}, {"user_id": bob.id, "body": ""},
                 {"user_id": alice.id, "body": "me"},
                 {"user_id": other_tenant.owner.pk, "body": "outsider"},
                 {"user_id": bob.id, "body": "x", "mentions": ["usr_nope"]}):
        response = alice.client.post(f"{BASE}/dms", body, format="json")
        assert response.status_code == 422, body
        assert response.json()["error"]["code"] == "VALIDATION_ERROR"


def test_dm_list_has_constant_queries(alice, tenant):
    dm(alice, add_person(tenant, "p1"), "x")
    with CaptureQueriesContext(connection) as one:
        alice.client.get(f"{BASE}/dms")
    for i in range(2, 5):
        dm(add_person(tenant, f"p{i}"), alice, "y")
    with CaptureQueriesContext(connection) as four:
        assert len(alice.client.get(f"{BASE}/dms").json()["data"]) == 4
    assert len(one.captured_queries) == len(four.captured_queries)
