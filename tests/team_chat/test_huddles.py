"""Huddles: start (201), join (200), a LiveKit-format media token, leave ends the empty room,
503 without a media server."""

from __future__ import annotations

import jwt
import pytest

from tests.team_chat.conftest import Person, make_channel

pytestmark = pytest.mark.django_db

SECRET = "media-secret-for-tests-0123456789abcdef"


@pytest.fixture
def media(settings):
    settings.TEAM_CHAT_MEDIA_URL = "wss://media.example.com"
    settings.TEAM_CHAT_MEDIA_API_KEY = "APIkey123"
    settings.TEAM_CHAT_MEDIA_API_SECRET = SECRET


def test_start_join_and_token(media, alice, bob):
    channel = make_channel(alice, "general", bob)
    url = f"/api/v1/team-chat/channels/{channel}/huddle"
    started = alice.client.post(url, {}, format="json")
    assert started.status_code == 201
    data = started.json()["data"]
    assert (data["started"], data["media_url"]) == (True, "wss://media.example.com")
    claims = jwt.decode(data["token"], SECRET, algorithms=["HS256"])
    assert (claims["iss"], claims["sub"]) == ("APIkey123", alice.id)
    assert claims["video"] == {"room": data["room"], "roomJoin": True, "canPublish": True,
                               "canSubscribe": True, "canPublishData": True}
    assert claims["exp"] > claims["nbf"]
    joined = bob.client.post(url, {}, format="json")
    assert joined.status_code == 200
    assert joined.json()["data"]["started"] is False
    assert joined.json()["data"]["huddle_id"] == data["huddle_id"]
    assert jwt.decode(joined.json()["data"]["token"], SECRET,
                      algorithms=["HS256"])["video"]["room"] == data["room"]
    # Joining again while in the room is still a join.
    assert alice.client.post(url, {}, format="json").status_code == 200


def test_leave_ends_the_huddle_when_the_room_empties(media, alice, bob):
    channel = make_channel(alice, "general", bob)
    url = f"/api/v1/team-chat/channels/{channel}/huddle"
    first = alice.client.post(url, {}, format="json").json()["data"]
    bob.client.post(url, {}, format="json")
    left = alice.client.post("/api/v1/team-chat/huddle/leave", {}, format="json")
    assert left.status_code == 200
    assert left.json()["data"] == {"huddle_id": first["huddle_id"], "channel_id": channel,
                                   "ended": False}
    last = bob.client.post("/api/v1/team-chat/huddle/leave", {}, format="json")
    assert last.json()["data"]["ended"] is True
    # Not in a huddle any more.
    again = bob.client.post("/api/v1/team-chat/huddle/leave", {}, format="json")
    assert again.status_code == 404
    # The next start opens a new huddle.
    fresh = alice.client.post(url, {}, format="json")
    assert fresh.status_code == 201
    assert fresh.json()["data"]["huddle_id"] != first["huddle_id"]


def test_without_media_server_live_mode_answers_503(tenant_factory):
    live = tenant_factory(sandbox=False)
    owner = Person(live.owner, live.session_client())
    channel = make_channel(owner, "general")
    response = owner.client.post(f"/api/v1/team-chat/channels/{channel}/huddle", {},
                                 format="json")
    assert response.status_code == 503
    assert response.json()["error"]["code"] == "SERVICE_UNAVAILABLE"
    leave = owner.client.post("/api/v1/team-chat/huddle/leave", {}, format="json")
    assert leave.status_code == 503


def test_without_media_server_test_mode_uses_the_sandbox_double(alice):
    channel = make_channel(alice, "general")
    response = alice.client.post(f"/api/v1/team-chat/channels/{channel}/huddle", {},
                                 format="json")
    assert response.status_code == 201
    data = response.json()["data"]
    assert data["media_url"] == "wss://media.sandbox.invalid"
    claims = jwt.decode(data["token"], options={"verify_signature": False})
    assert (claims["iss"], claims["sub"], claims["video"]["room"]) == (
        "sandbox", alice.id, data["room"])
    left = alice.client.post("/api/v1/team-chat/huddle/leave", {}, format="json")
    assert left.json()["data"]["ended"] is True
