"""Channels, members, messages, threads, edits, deletes and read markers over HTTP."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.team_chat.conftest import add_person, make_channel, post

pytestmark = pytest.mark.django_db

BASE = "/api/v1/team-chat"


def test_create_channel_makes_the_creator_owner(alice):
    response = alice.client.post(f"{BASE}/channels", {"name": "general",
                                                      "description": "All hands"},
                                 format="json")
    assert response.status_code == 201
    data = response.json()["data"]
    assert data["id"].startswith("tch_")
    assert (data["name"], data["description"], data["my_role"]) == ("general", "All hands",
                                                                      "owner")
    assert data["created_by_user_id"] == alice.id
    listed = alice.client.get(f"{BASE}/channels").json()["data"]
    assert [(c["id"], c["my_role"], c["unread_count"]) for c in listed] == [
        (data["id"], "owner", 0)]


def test_duplicate_name_and_bad_bodies(alice):
    make_channel(alice, "general")
    again = alice.client.post(f"{BASE}/channels", {"name": "general"}, format="json")
    assert again.status_code == 409
    assert again.json()["error"]["code"] == "ALREADY_EXISTS"
    for body in ({}, {"name": ""}, {"name": "x" * 81}, ["general"]):
        bad = alice.client.post(f"{BASE}/channels", body, format="json")
        assert bad.status_code == 422, body
        assert bad.json()["error"]["code"] == "VALIDATION_ERROR"


def test_members_are_managed_by_owner_or_admin(alice, bob, carol, tenant):
    channel = make_channel(alice, "general", bob)
    members = f"{BASE}/channels/{channel}/members"
    # A plain member cannot add anyone.
    refused = bob.client.post(members, {"user_id": carol.id}, format="json")
    assert refused.status_code == 403
    assert refused.json()["error"]["code"] == "CHANNEL_ROLE_REQUIRED"
    # The owner adds carol as admin; carol (admin) adds dave.
    assert alice.client.post(members, {"user_id": carol.id, "role": "admin"},
                             format="json").status_code == 201
    dave = add_person(tenant, "dave")
    added = carol.client.post(members, {"user_id": dave.id}, format="json")
    assert added.status_code == 201
    assert added.json()["data"]["role"] == "member"
    assert alice.client.post(members, {"user_id": dave.id},
                             format="json").json()["error"]["code"] == "ALREADY_EXISTS"
    listed = alice.client.get(members).json()["data"]
    assert {m["user_id"]: m["role"] for m in listed} == {
        alice.id: "owner", bob.id: "member", carol.id: "admin", dave.id: "member"}
    # Dave sees the channel with his role.
    assert [c["my_role"] for c in dave.client.get(f"{BASE}/channels").json()["data"]] == [
        "member"]
    # A user id of no member of the organization is refused.
    stranger = alice.client.post(members, {"user_id": "usr_01NOPE"}, format="json")
    assert stranger.status_code == 422
    # Bob leaves by himself; he cannot remove the owner.
    assert bob.client.delete(f"{members}/{alice.id}").status_code == 403
    assert bob.client.delete(f"{members}/{bob.id}").status_code == 204
    assert bob.client.get(f"{BASE}/channels/{channel}").json()["error"]["code"] == (
        "NOT_A_MEMBER")
    # The last owner cannot leave.
    assert alice.client.delete(f"{members}/{alice.id}").status_code == 409


def test_non_members_get_not_a_member_on_every_channel_route(alice, bob):
    channel = make_channel(alice, "private")
    root = post(alice, channel, "secret plans")
    routes = [
        ("get", f"{BASE}/channels/{channel}", None),
        ("patch", f"{BASE}/channels/{channel}", {"name": "x"}),
        ("delete", f"{BASE}/channels/{channel}", None),
        ("get", f"{BASE}/channels/{channel}/members", None),
        ("post", f"{BASE}/channels/{channel}/members", {"user_id": bob.id}),
        ("delete", f"{BASE}/channels/{channel}/members/{alice.id}", None),
        ("get", f"{BASE}/channels/{channel}/messages", None),
        ("post", f"{BASE}/channels/{channel}/messages", {"body": "hi"}),
        ("patch", f"{BASE}/channels/{channel}/messages/{root['id']}", {"body": "x"}),
        ("delete", f"{BASE}/channels/{channel}/messages/{root['id']}", None),
        ("get", f"{BASE}/channels/{channel}/messages/{root['id']}/thread", None),
        ("post", f"{BASE}/channels/{channel}/messages/{root['id']}/thread", {"body": "x"}),
        ("post", f"{BASE}/channels/{channel}/read", {}),
        ("post", f"{BASE}/channels/{channel}/huddle", {}),
    ]
    for method, url, body in routes:
        response = getattr(bob.client, method)(url, body, format="json")
        assert response.status_code == 403, (method, url, response.content)
        assert response.json()["error"]["code"] == "NOT_A_MEMBER"
    # An unknown channel is 404, not 403.
    unknown = bob.client.get(f"{BASE}/channels/tch_01UNKNOWN/messages")
    assert unknown.status_code == 404
    assert bob.client.get(f"{BASE}/channels").json()["data"] == []
    # Nothing changed.
    assert alice.client.get(f"{BASE}/channels/{channel}/messages").json()["data"][0][
        "root"]["body"] == "secret plans"


def test_message_fields_mentions_and_attachments(alice, bob, carol, tenant):
    channel = make_channel(alice, "general", bob)
    from django.core.files.uploadedfile import SimpleUploadedFile

    upload = alice.client.post("/api/v1/files/upload", {
        "file": SimpleUploadedFile("a.txt", b"hello"), "purpose": "team_chat"},
        format="multipart")
    assert upload.status_code == 201, upload.content
    file_id = upload.json()["data"]["id"]
    msg = post(alice, channel, "hello @bob", mentions=[bob.id], attachments=[file_id])
    assert msg["id"].startswith("tcm_")
    assert (msg["channel_id"], msg["sender_user_id"], msg["body"]) == (channel, alice.id,
                                                                       "hello @bob")
    assert (msg["mentions"], msg["attachments"]) == ([bob.id], [file_id])
    assert (msg["parent_message_id"], msg["reply_count"], msg["last_reply_at"],
            msg["edited_at"]) == (None, 0, None, None)
    assert msg["sender_name"] == alice.user.name or alice.user.email
    assert msg["sender_avatar_url"].startswith("https://gravatar.com/avatar/")
    url = f"{BASE}/channels/{channel}/messages"
    # Mentions must be members; attachments files of the organization.
    bad = alice.client.post(url, {"body": "x", "mentions": [carol.id]}, format="json")
    assert bad.status_code == 422
    assert bad.json()["error"]["details"]["issues"][0]["field"] == "mentions"
    bad = alice.client.post(url, {"body": "x", "attachments": ["fil_01NOPE"]}, format="json")
    assert bad.status_code == 422
    for body in ({}, {"body": ""}, {"body": "x" * 4001}, {"body": "x", "mentions": "u"}):
        assert alice.client.post(url, body, format="json").status_code == 422, body


def test_deleted_sender_renders_null_name_and_avatar(alice, bob):
    channel = make_channel(alice, "general", bob)
    post(bob, channel, "bye")
    bob.user.is_active = False
    bob.user.save(update_fields=["is_active"])
    root = alice.client.get(f"{BASE}/channels/{channel}/messages").json()["data"][0]["root"]
    assert (root["sender_user_id"], root["sender_name"], root["sender_avatar_url"]) == (
        bob.id, None, None)


def test_history_newest_first_paginated_with_constant_queries(alice, bob):
    channel = make_channel(alice, "general", bob)
    ids = [post(alice if i % 2 else bob, channel, f"m{i}")["id"] for i in range(7)]
    url = f"{BASE}/channels/{channel}/messages"
    first = alice.client.get(url, {"limit": 3}).json()
    assert [e["root"]["body"] for e in first["data"]] == ["m6", "m5", "m4"]
    assert first["meta"]["pagination"]["has_more"] is True
    second = alice.client.get(url, {"limit": 3, "cursor": first["meta"]["pagination"]["cursor"]}
                              ).json()
    assert [e["id"] for e in second["data"]] == ids[3:0:-1]
    # Default page is 50, the maximum 200 (a larger limit is clamped).
    for _ in range(3):
        post(bob, channel, "more")
    with CaptureQueriesContext(connection) as few:
        small = alice.client.get(url, {"limit": 2})
    with CaptureQueriesContext(connection) as many:
        big = alice.client.get(url, {"limit": 8})
    assert len(small.json()["data"]) == 2
    assert len(big.json()["data"]) == 8
    assert len(alice.client.get(url, {"limit": 500}).json()["data"]) == 10
    assert len(few.captured_queries) == len(many.captured_queries)
    assert alice.client.get(url, {"limit": 0}).status_code == 400
    assert alice.client.get(url, {"cursor": "garbage"}).json()["error"]["code"] == (
        "INVALID_CURSOR")


def test_threads_are_one_level_deep_with_counts(alice, bob):
    channel = make_channel(alice, "general", bob)
    root = post(alice, channel, "root")
    thread = f"{BASE}/channels/{channel}/messages/{root['id']}/thread"
    first = bob.client.post(thread, {"body": "reply 1"}, format="json")
    assert first.status_code == 201
    reply = first.json()["data"]
    assert reply["parent_message_id"] == root["id"]
    # Replying to a reply lands in the root's thread.
    nested = bob.client.post(f"{BASE}/channels/{channel}/messages/{reply['id']}/thread",
                             {"body": "reply 2"}, format="json").json()["data"]
    assert nested["parent_message_id"] == root["id"]
    # parent_message_id on the messages route does the same.
    third = post(alice, channel, "reply 3", parent_message_id=nested["id"])
    assert third["parent_message_id"] == root["id"]
    data = alice.client.get(thread).json()["data"]
    assert data["root"]["reply_count"] == 3
    assert data["root"]["last_reply_at"] == third["created_at"]
    assert [r["body"] for r in data["replies"]] == ["reply 1", "reply 2", "reply 3"]
    # Replies are not roots of the history.
    history = alice.client.get(f"{BASE}/channels/{channel}/messages").json()["data"]
    assert [(e["id"], e["reply_count"]) for e in history] == [(root["id"], 3)]
    # Unknown message: 404.
    assert alice.client.post(f"{BASE}/channels/{channel}/messages/tcm_01NOPE/thread",
                             {"body": "x"}, format="json").status_code == 404


def test_edit_by_author_only(alice, bob):
    channel = make_channel(alice, "general", bob)
    msg = post(alice, channel, "typo")
    url = f"{BASE}/channels/{channel}/messages/{msg['id']}"
    other = bob.client.patch(url, {"body": "hijack"}, format="json")
    assert other.status_code == 404
    assert other.json()["error"]["code"] == "NOT_FOUND"
    edited = alice.client.patch(url, {"body": "fixed"}, format="json")
    assert edited.status_code == 200
    assert edited.json()["data"]["body"] == "fixed"
    assert edited.json()["data"]["edited_at"] is not None
    history = bob.client.get(f"{BASE}/channels/{channel}/messages").json()["data"]
    assert history[0]["root"]["body"] == "fixed"
    assert alice.client.patch(url, {"body": ""}, format="json").status_code == 422


def test_soft_delete_renders_root_null(alice, bob):
    channel = make_channel(alice, "general", bob)
    lonely = post(bob, channel, "lonely")
    root = post(bob, channel, "root")
    reply = post(alice, channel, "reply", parent_message_id=root["id"])
    # Others cannot delete bob's message (the owner of the channel can).
    assert bob.client.delete(f"{BASE}/channels/{channel}/messages/{reply['id']}"
                             ).status_code == 404
    assert bob.client.delete(f"{BASE}/channels/{channel}/messages/{root['id']}"
                             ).status_code == 204
    assert alice.client.delete(f"{BASE}/channels/{channel}/messages/{lonely['id']}"
                               ).status_code == 204
    history = bob.client.get(f"{BASE}/channels/{channel}/messages").json()["data"]
    # The deleted root with a reply stays as a tombstone; the lonely one is gone.
    assert [(e["id"], e["root"], e["reply_count"]) for e in history] == [
        (root["id"], None, 1)]
    thread = bob.client.get(f"{BASE}/channels/{channel}/messages/{root['id']}/thread"
                            ).json()["data"]
    assert thread["root"] is None
    assert [r["body"] for r in thread["replies"]] == ["reply"]
    # A deleted message cannot be edited or replied to.
    assert bob.client.patch(f"{BASE}/channels/{channel}/messages/{root['id']}",
                            {"body": "x"}, format="json").status_code == 404


def test_read_markers_and_unread_counts(alice, bob):
    channel = make_channel(alice, "general", bob)
    msgs = [post(alice, channel, f"m{i}") for i in range(4)]
    post(bob, channel, "mine")  # the sender's own message moves their marker

    def unread(person):
        return person.client.get(f"{BASE}/channels").json()["data"][0]["unread_count"]

    assert unread(alice) == 1  # bob's message
    assert unread(bob) == 0  # bob's marker moved when he posted
    post(alice, channel, "later")
    assert unread(bob) == 1
    # Advancing to an older message never moves the marker back.
    back = bob.client.post(f"{BASE}/channels/{channel}/read", {"message_id": msgs[0]["id"]},
                           format="json")
    assert back.status_code == 200
    assert back.json()["data"]["unread_count"] == 1
    done = alice.client.post(f"{BASE}/channels/{channel}/read", {}, format="json")
    assert done.json()["data"]["unread_count"] == 0
    assert unread(alice) == 0
    assert alice.client.post(f"{BASE}/channels/{channel}/read", {"message_id": "tcm_x"},
                             format="json").status_code == 422


def test_unread_count_is_capped(alice, bob, settings):
    settings.TEAM_CHAT_UNREAD_CAP = 3
    channel = make_channel(alice, "general", bob)
    for i in range(5):
        post(alice, channel, f"m{i}")
    assert bob.client.get(f"{BASE}/channels").json()["data"][0]["unread_count"] == 3


def test_channel_list_has_constant_queries(alice, bob):
    make_channel(alice, "one", bob)
    with CaptureQueriesContext(connection) as one:
        alice.client.get(f"{BASE}/channels")
    for name in ("two", "three", "four"):
        channel = make_channel(alice, name, bob)
        post(bob, channel, "hi")
    with CaptureQueriesContext(connection) as four:
        listed = alice.client.get(f"{BASE}/channels").json()["data"]
    assert len(listed) == 4
    assert sorted(c["unread_count"] for c in listed) == [0, 1, 1, 1]
    assert len(one.captured_queries) == len(four.captured_queries)


def test_update_and_delete_channel(alice, bob):
    channel = make_channel(alice, "general", bob)
    url = f"{BASE}/channels/{channel}"
    assert bob.client.patch(url, {"name": "x"}, format="json").status_code == 403
    renamed = alice.client.patch(url, {"name": "town-square"}, format="json")
    assert renamed.json()["data"]["name"] == "town-square"
    assert bob.client.delete(url).status_code == 403
    assert alice.client.delete(url).status_code == 204
    assert alice.client.get(url).status_code == 404


def test_api_key_acts_as_its_creating_user(tenant, alice):
    channel = make_channel(alice, "general")
    by_key = tenant.client().post(f"{BASE}/channels/{channel}/messages", {"body": "from key"},
                                  format="json")
    assert by_key.status_code == 201
    assert by_key.json()["data"]["sender_user_id"] == tenant.owner.pk


def test_viewer_reads_but_cannot_post(alice, tenant):
    viewer = add_person(tenant, "vera", role="viewer")
    channel = make_channel(alice, "general", viewer)
    post(alice, channel, "hello")
    assert viewer.client.get(f"{BASE}/channels/{channel}/messages").status_code == 200
    refused = viewer.client.post(f"{BASE}/channels/{channel}/messages", {"body": "x"},
                                 format="json")
    assert refused.status_code == 403
    assert refused.json()["error"]["code"] == "INSUFFICIENT_PERMISSIONS"
