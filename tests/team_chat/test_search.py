"""Full-text search: only the caller's channels and DMs, relevance then recency, opaque
cursor, highlighted snippets."""

from __future__ import annotations

import pytest

from tests.team_chat.conftest import make_channel, post

pytestmark = pytest.mark.django_db

SEARCH = "/api/v1/team-chat/search"


def test_search_covers_my_channels_and_dms_only(alice, bob, carol):
    shared = make_channel(alice, "shared", bob)
    secret = make_channel(carol, "secret")
    post(alice, shared, "the deploy is scheduled for friday")
    post(carol, secret, "deploy credentials are in the vault")
    bob.client.post("/api/v1/team-chat/dms", {"user_id": alice.id,
                                              "body": "can you review the deploy?"},
                    format="json")
    hits = bob.client.get(SEARCH, {"q": "deploy"}).json()["data"]
    bodies = {h["message"]["body"] for h in hits}
    assert bodies == {"the deploy is scheduled for friday", "can you review the deploy?"}
    assert all("<mark>deploy</mark>" in h["snippet"] for h in hits)
    # Carol finds her own channel's message and nothing of the others.
    assert [h["message"]["channel_id"] for h in
            carol.client.get(SEARCH, {"q": "deploy"}).json()["data"]] == [secret]


def test_relevance_then_recency_with_opaque_cursor(alice):
    channel = make_channel(alice, "general")
    weak_old = post(alice, channel, "release notes draft, mention release once among many "
                                    "other words that dilute the relevance of this text")
    strong = post(alice, channel, "release release release")
    weak_new = post(alice, channel, "release notes draft, mention release once among many "
                                    "other words that dilute the relevance of this text")
    post(alice, channel, "nothing to see")
    page = alice.client.get(SEARCH, {"q": "release", "limit": 2}).json()
    assert [h["message"]["id"] for h in page["data"]] == [strong["id"], weak_new["id"]]
    assert page["data"][0]["rank"] > page["data"][1]["rank"]
    cursor = page["meta"]["pagination"]["cursor"]
    assert page["meta"]["pagination"]["has_more"] is True
    rest = alice.client.get(SEARCH, {"q": "release", "limit": 2, "cursor": cursor}).json()
    assert [h["message"]["id"] for h in rest["data"]] == [weak_old["id"]]
    assert rest["meta"]["pagination"]["has_more"] is False
    # The cursor belongs to its query.
    other = alice.client.get(SEARCH, {"q": "notes", "cursor": cursor})
    assert other.status_code == 400
    assert other.json()["error"]["code"] == "INVALID_CURSOR"


def test_edits_and_deletes_are_reflected(alice):
    channel = make_channel(alice, "general")
    msg = post(alice, channel, "budget meeting")
    alice.client.patch(f"/api/v1/team-chat/channels/{channel}/messages/{msg['id']}",
                       {"body": "planning meeting"}, format="json")
    assert alice.client.get(SEARCH, {"q": "budget"}).json()["data"] == []
    assert len(alice.client.get(SEARCH, {"q": "planning"}).json()["data"]) == 1
    alice.client.delete(f"/api/v1/team-chat/channels/{channel}/messages/{msg['id']}")
    assert alice.client.get(SEARCH, {"q": "planning"}).json()["data"] == []


def test_search_needs_a_query(alice):
    for params in ({}, {"q": "  "}, {"q": "x" * 501}):
        response = alice.client.get(SEARCH, params)
        assert response.status_code == 422
    # Operators only or stop words match nothing, without failing.
    assert alice.client.get(SEARCH, {"q": "the -"}).status_code == 200
    assert alice.client.get(SEARCH, {"q": '"unclosed'}).status_code == 200
