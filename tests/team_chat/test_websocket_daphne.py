"""`/ws/team-chat/` on a real daphne server with a real WebSocket client (`websockets`).

daphne runs as a subprocess on a free port sharing this test run's database, Redis key
prefix and so its `team_chat` channel layer (Redis pub/sub); the REST calls go through
the HTTP API in this process, whose services publish to the same layer."""

from __future__ import annotations

import json

import pytest
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

from tests.daphne_server import running_daphne
from tests.team_chat.conftest import make_channel

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

WAIT = 15


@pytest.fixture(scope="module")
def daphne_url(django_db_setup, tmp_path_factory):
    with running_daphne(tmp_path_factory.mktemp("daphne-team-chat")) as port:
        yield f"ws://127.0.0.1:{port}/ws/team-chat/"


def token(person) -> str:
    return person.client._credentials["HTTP_AUTHORIZATION"].split(" ", 1)[1]


def frame(ws) -> dict:
    return json.loads(ws.recv(timeout=WAIT))


def open_ws(url: str, person):
    ws = connect(f"{url}?token={token(person)}", open_timeout=WAIT)
    ready = frame(ws)
    assert (ready["type"], ready["user_id"]) == ("ready", person.id)
    return ws


def test_member_receives_a_message_and_a_non_member_nothing(daphne_url, alice, bob, carol):
    channel = make_channel(alice, "general", bob)
    own = make_channel(carol, "carols")
    with open_ws(daphne_url, bob) as member, open_ws(daphne_url, carol) as outsider:
        posted = alice.client.post(f"/api/v1/team-chat/channels/{channel}/messages",
                                   {"body": "over the wire"}, format="json")
        assert posted.status_code == 201
        event = frame(member)
        assert (event["type"], event["channel_id"], event["message"]["body"]) == (
            "message.created", channel, "over the wire")
        assert event["message"]["id"] == posted.json()["data"]["id"]
        # Published after alice's message: the first frame carol sees is her own channel's,
        # so nothing of the general channel reached her before it.
        carol.client.post(f"/api/v1/team-chat/channels/{own}/messages", {"body": "mine"},
                          format="json")
        first = frame(outsider)
        assert (first["channel_id"], first["message"]["body"]) == (own, "mine")
        outsider.send(json.dumps({"type": "typing", "channel_id": channel}))
        assert frame(outsider)["error"]["code"] == "NOT_A_MEMBER"


def test_typing_between_real_clients(daphne_url, alice, bob):
    channel = make_channel(alice, "general", bob)
    with open_ws(daphne_url, alice) as a, open_ws(daphne_url, bob) as b:
        b.send(json.dumps({"type": "typing", "channel_id": channel}))
        assert frame(a) == {"type": "typing", "channel_id": channel, "user_id": bob.id}


def test_bad_token_is_refused_with_a_reason(daphne_url):
    with connect(f"{daphne_url}?token=eyJbad", open_timeout=WAIT) as ws:
        assert frame(ws)["error"]["code"] == "UNAUTHORIZED"
        with pytest.raises(ConnectionClosed) as closed:
            ws.recv(timeout=WAIT)
    assert closed.value.rcvd.code == 4401
