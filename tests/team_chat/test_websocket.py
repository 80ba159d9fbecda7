"""Live updates through Channels' WebsocketCommunicator (the consumer in this process, the
`team_chat` channel layer on Redis pub/sub as in production).

REST calls go through the HTTP API (the test client in a worker thread); the sockets must
receive what concerns them, and a socket that is not a member must receive nothing."""

from __future__ import annotations

import pytest
from asgiref.sync import async_to_sync, sync_to_async
from channels.testing import WebsocketCommunicator

from conversations.team_chat.consumers import TeamChatConsumer
from tests.team_chat.conftest import make_channel

pytestmark = pytest.mark.django_db(transaction=True)

BASE = "/api/v1/team-chat"
WAIT = 10


def token(person) -> str:
    return person.client._credentials["HTTP_AUTHORIZATION"].split(" ", 1)[1]


async def open_socket(query: str) -> tuple[WebsocketCommunicator, dict]:
    socket = WebsocketCommunicator(TeamChatConsumer.as_asgi(), f"/ws/team-chat/?{query}")
    connected, _ = await socket.connect(timeout=WAIT)
    assert connected
    return socket, await socket.receive_json_from(timeout=WAIT)


async def joined(person) -> WebsocketCommunicator:
    socket, ready = await open_socket(f"token={token(person)}")
    assert ready["type"] == "ready"
    assert ready["user_id"] == person.id
    return socket


def call(person, method: str, url: str, body=None):
    return sync_to_async(getattr(person.client, method))(url, body, format="json")


def live(test):
    """Run an async test body in one event loop (no pytest-asyncio needed)."""
    return async_to_sync(test)()


def test_members_receive_messages_and_a_non_member_nothing(alice, bob, carol):
    channel = make_channel(alice, "general", bob)

    async def scenario():
        a, b, c = await joined(alice), await joined(bob), await joined(carol)
        posted = await call(alice, "post", f"{BASE}/channels/{channel}/messages",
                            {"body": "hello team"})
        assert posted.status_code == 201
        message_id = posted.json()["data"]["id"]
        for socket in (a, b):
            event = await socket.receive_json_from(timeout=WAIT)
            assert event["type"] == "message.created"
            assert (event["channel_id"], event["message"]["id"],
                    event["message"]["body"]) == (channel, message_id, "hello team")
        # Edits, thread replies, deletes and typing reach members only.
        await call(alice, "patch", f"{BASE}/channels/{channel}/messages/{message_id}",
                   {"body": "hello all"})
        for socket in (a, b):
            edited = await socket.receive_json_from(timeout=WAIT)
            assert (edited["type"], edited["message"]["body"]) == ("message.updated",
                                                                   "hello all")
        await call(bob, "post", f"{BASE}/channels/{channel}/messages/{message_id}/thread",
                   {"body": "in thread"})
        for socket in (a, b):
            reply = await socket.receive_json_from(timeout=WAIT)
            assert (reply["type"], reply["root_id"], reply["reply_count"]) == (
                "thread.reply", message_id, 1)
        await b.send_json_to({"type": "typing", "channel_id": channel})
        for socket in (a, b):
            typing = await socket.receive_json_from(timeout=WAIT)
            assert typing == {"type": "typing", "channel_id": channel, "user_id": bob.id}
        await call(alice, "delete", f"{BASE}/channels/{channel}/messages/{message_id}")
        for socket in (a, b):
            deleted = await socket.receive_json_from(timeout=WAIT)
            assert (deleted["type"], deleted["message_id"]) == ("message.deleted",
                                                                message_id)
        # Carol (not a member) may not type there and received none of it.
        await c.send_json_to({"type": "typing", "channel_id": channel})
        refused = await c.receive_json_from(timeout=WAIT)
        assert refused["error"]["code"] == "NOT_A_MEMBER"
        assert await c.receive_nothing(timeout=0.5)
        for socket in (a, b, c):
            await socket.disconnect()

    live(scenario)


def test_added_member_starts_receiving_and_removed_member_stops(alice, bob):
    channel = make_channel(alice, "general")

    async def scenario():
        b = await joined(bob)
        await call(alice, "post", f"{BASE}/channels/{channel}/members", {"user_id": bob.id})
        added = await b.receive_json_from(timeout=WAIT)
        assert (added["type"], added["channel_id"], added["user_id"]) == (
            "member.added", channel, bob.id)
        await call(alice, "post", f"{BASE}/channels/{channel}/messages", {"body": "welcome"})
        event = await b.receive_json_from(timeout=WAIT)
        assert event["message"]["body"] == "welcome"
        await call(alice, "delete", f"{BASE}/channels/{channel}/members/{bob.id}")
        removed = await b.receive_json_from(timeout=WAIT)
        assert (removed["type"], removed["user_id"]) == ("member.removed", bob.id)
        await call(alice, "post", f"{BASE}/channels/{channel}/messages", {"body": "after"})
        # Bob's own heartbeat answer comes next: nothing of the channel came before it.
        await b.send_json_to({"type": "ping"})
        assert await b.receive_json_from(timeout=WAIT) == {"type": "pong"}
        assert await b.receive_nothing(timeout=0.5)
        await b.disconnect()

    live(scenario)


def test_dms_reach_both_participants_only(alice, bob, carol):
    async def scenario():
        a, b, c = await joined(alice), await joined(bob), await joined(carol)
        sent = await call(alice, "post", f"{BASE}/dms", {"user_id": bob.id, "body": "psst"})
        thread_id = sent.json()["data"]["thread_id"]
        for socket in (a, b):
            event = await socket.receive_json_from(timeout=WAIT)
            assert (event["type"], event["thread_id"], event["message"]["body"]) == (
                "message.created", thread_id, "psst")
        await b.send_json_to({"type": "typing", "thread_id": thread_id})
        for socket in (a, b):
            assert (await socket.receive_json_from(timeout=WAIT))["type"] == "typing"
        await c.send_json_to({"type": "typing", "thread_id": thread_id})
        assert (await c.receive_json_from(timeout=WAIT))["error"]["code"] == "NOT_FOUND"
        assert await c.receive_nothing(timeout=0.5)
        for socket in (a, b, c):
            await socket.disconnect()

    live(scenario)


def test_presence_changes_are_pushed(alice, bob, other_tenant):
    async def scenario():
        a = await joined(alice)
        outsider, ready = await open_socket(f"token={other_tenant.raw_key}")
        assert ready["type"] == "ready"  # an API key acts as its creating user
        b = await joined(bob)
        await b.send_json_to({"type": "heartbeat", "status": "online"})
        own = [await b.receive_json_from(timeout=WAIT) for _ in range(2)]
        # The ack, and the push every socket of the organization gets (bob's too).
        assert sorted((f["type"], f["status"]) for f in own) == [
            ("presence", "online"), ("presence.ack", "online")]
        pushed = await a.receive_json_from(timeout=WAIT)
        assert (pushed["type"], pushed["user_id"], pushed["status"]) == (
            "presence", bob.id, "online")
        # The same status again is not a change: nothing more is pushed.
        await call(bob, "post", f"{BASE}/presence/heartbeat", {"status": "online"})
        await call(bob, "post", f"{BASE}/presence/heartbeat", {"status": "away"})
        for socket in (a, b):
            away = await socket.receive_json_from(timeout=WAIT)
            assert (away["type"], away["status"]) == ("presence", "away")
        # Another organization hears nothing of it.
        assert await outsider.receive_nothing(timeout=0.5)
        await b.send_json_to({"type": "heartbeat", "status": "offline"})
        assert (await b.receive_json_from(timeout=WAIT))["type"] == "error"
        for socket in (a, b, outsider):
            await socket.disconnect()

    live(scenario)


def test_refused_connections_say_why(tenant):
    async def scenario():
        for query, code in (("", "UNAUTHORIZED"), ("token=eyJnope", "UNAUTHORIZED"),
                            ("token=svc_test_sk_nope", "INVALID_API_KEY")):
            socket, frame = await open_socket(query)
            assert frame["type"] == "error"
            assert frame["error"]["code"] == code
            closed = await socket.receive_output(timeout=WAIT)
            assert closed == {"type": "websocket.close", "code": 4401}
        socket = WebsocketCommunicator(TeamChatConsumer.as_asgi(), "/ws/team-chat/")
        await socket.connect(timeout=WAIT)
        await socket.disconnect()

    live(scenario)


def test_bad_frames_answer_errors_and_keep_the_socket(alice):
    async def scenario():
        a = await joined(alice)
        for frame in ("not json", "[1, 2]", '{"type": "dance"}', '{"type": "typing"}'):
            await a.send_to(text_data=frame)
            answer = await a.receive_json_from(timeout=WAIT)
            assert answer["type"] == "error", frame
        await a.send_json_to({"type": "ping"})
        assert await a.receive_json_from(timeout=WAIT) == {"type": "pong"}
        await a.disconnect()

    live(scenario)
