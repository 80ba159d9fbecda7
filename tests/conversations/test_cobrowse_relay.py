"""The co-browse relay over a real daphne server with two real WebSocket clients
(`websockets`): the visitor's DOM events reach the agent, the agent's control events reach
the visitor only when control was granted, a forged token is refused, ending the session
closes both sockets. Transactional, so daphne sees the committed session."""

from __future__ import annotations

import json

import pytest
from websockets.exceptions import ConnectionClosed, InvalidStatus
from websockets.sync.client import connect

from tests.daphne_server import running_daphne

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]



@pytest.fixture(scope="module")
def daphne_url(django_db_setup, tmp_path_factory):
    logs = tmp_path_factory.mktemp("daphne-cobrowse")
    with running_daphne(logs, settings_module="tests.platform_core.events.daphne_settings") as port:
        yield f"ws://127.0.0.1:{port}"


def _session(tenant, *, consent: bool, agent_control: bool) -> tuple[dict, dict]:
    client = tenant.client()
    contact = client.post("/api/v1/contacts", {"phone": "+14155550123"}, format="json")
    cid = client.post("/api/v1/conversations", {"contact_id": contact.json()["data"]["id"],
                                                "channel": "sms"}, format="json")
    cid = cid.json()["data"]["id"]
    key = client.post("/api/v1/api-keys", {"name": "widget", "type": "public",
                                           "scopes": ["conversations:read"]}, format="json")
    visitor = tenant.client(key.json()["data"]["key"]).post(
        "/api/v1/widget/cobrowse", {"conversation_id": cid, "visitor_id": "v1",
                                    "control": consent}, format="json").json()["data"]
    agent = client.post(f"/api/v1/cobrowse/{cid}/join", {"control": agent_control},
                        format="json").json()["data"]
    return visitor, agent


def _open(base: str, grant: dict, token: str | None = None):
    return connect(f"{base}/ws/cobrowse/{grant['session_id']}/?token={token or grant['token']}",
                   open_timeout=10)


def _next(socket_) -> dict:
    return json.loads(socket_.recv(timeout=10))


def test_relay_carries_dom_events_and_granted_control(daphne_url, tenant):
    visitor_grant, agent_grant = _session(tenant, consent=True, agent_control=True)
    assert agent_grant["control"] is True
    with _open(daphne_url, visitor_grant) as visitor, _open(daphne_url, agent_grant) as agent:
        dom = {"type": "dom", "mutations": [{"op": "set", "path": "#total", "text": "42"}]}
        visitor.send(json.dumps(dom))
        assert _next(agent) == {"from": "visitor", "event": dom}
        control = {"type": "control", "action": "click", "selector": "#pay"}
        agent.send(json.dumps(control))
        assert _next(visitor) == {"from": "agent", "event": control}
        # An agent sends control events only.
        agent.send(json.dumps({"type": "dom"}))
        assert _next(agent)["code"] == "VALIDATION_ERROR"
        # Ending the session closes both sockets.
        ended = tenant.client().post(f"/api/v1/cobrowse/{visitor_grant['cobrowse']['conversation_id']}/end")
        assert ended.status_code == 200
        for side in (visitor, agent):
            assert _next(side) == {"type": "session.ended"}
            with pytest.raises(ConnectionClosed):
                side.recv(timeout=10)


def test_control_refused_without_consent_and_forged_tokens_refused(daphne_url, tenant):
    visitor_grant, agent_grant = _session(tenant, consent=False, agent_control=True)
    assert agent_grant["control"] is False
    with _open(daphne_url, visitor_grant) as visitor, _open(daphne_url, agent_grant) as agent:
        agent.send(json.dumps({"type": "control", "action": "scroll"}))
        assert _next(agent)["code"] == "COBROWSE_CONTROL_NOT_GRANTED"
        visitor.send(json.dumps({"type": "dom", "n": 1}))
        assert _next(agent)["event"] == {"type": "dom", "n": 1}  # nothing else came first
    forged = agent_grant["token"][:-3] + "abc"
    with pytest.raises(InvalidStatus) as refused:
        _open(daphne_url, agent_grant, token=forged)
    assert refused.value.response.status_code == 403
