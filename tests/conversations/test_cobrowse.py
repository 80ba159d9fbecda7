"""Co-browse over HTTP (Document 3, 2.5, 3 and 4.7; 0-conventions.md 7): the widget's
request with a public key, read, agent join (control = request AND consent), join again,
end (idempotent), and every error of 4.7."""

from __future__ import annotations

import pytest

from conversations.cobrowse import read_token
from platform_core.identity.models import User
from platform_core.tenancy.models import Membership, Role

from .conftest import CONVERSATIONS

pytestmark = pytest.mark.django_db

WIDGET = "/api/v1/widget/cobrowse"


def cobrowse(cid: str, suffix: str = "") -> str:
    return f"/api/v1/cobrowse/{cid}{suffix}"


def public_client(tenant):
    response = tenant.client().post("/api/v1/api-keys", {
        "name": "widget", "type": "public", "scopes": ["conversations:read"]}, format="json")
    assert response.status_code == 201, response.content
    return tenant.client(response.json()["data"]["key"])


def conversation(tenant, inbound) -> str:
    return inbound("can you show me?")["conversation_id"]


def test_widget_start_read_join_end(tenant, inbound):
    client = tenant.client()
    cid = conversation(tenant, inbound)
    assert client.get(cobrowse(cid)).json()["data"] == {"cobrowse": None}
    widget = public_client(tenant)
    started = widget.post(WIDGET, {"conversation_id": cid, "visitor_id": "v-1",
                                   "control": True}, format="json")
    assert started.status_code == 201, started.content
    data = started.json()["data"]
    assert data["role"] == "visitor"
    assert data["expires_in"] == 1800
    assert data["ws_url"].endswith(f"/ws/cobrowse/{data['session_id']}/")
    session = data["cobrowse"]
    assert session["status"] == "requested"
    assert session["visitor_id"] == "v-1"
    assert session["control"] is True
    assert session["started_at"] is None
    assert session["room_name"] == f"cobrowse:{tenant.org.pk}:{cid}:{data['session_id']}"
    claims = read_token(data["token"], session_id=data["session_id"])
    assert claims["r"] == "visitor"
    assert claims["c"] == cid
    again = widget.post(WIDGET, {"conversation_id": cid, "control": True}, format="json")
    assert again.status_code == 200
    assert again.json()["data"]["session_id"] == data["session_id"]

    read = client.get(cobrowse(cid)).json()["data"]["cobrowse"]
    assert set(read) >= {"session_id", "status", "room_name", "visitor_id", "control",
                         "requested_at", "started_at", "ended_at", "ended_by",
                         "agent_user_id"}
    joined = client.post(cobrowse(cid, "/join"), {"control": True}, format="json")
    assert joined.status_code == 200, joined.content
    grant = joined.json()["data"]
    assert (grant["role"], grant["control"], grant["expires_in"]) == ("agent", True, 1800)
    assert grant["session_id"] == data["session_id"]
    assert grant["room_name"] == session["room_name"]
    assert grant["token"]
    assert grant["ws_url"]
    active = grant["cobrowse"]
    assert active["status"] == "active"
    assert active["started_at"] is not None
    assert active["agent_user_id"] == tenant.key.pk
    rejoined = client.post(cobrowse(cid, "/join"), {}, format="json").json()["data"]
    assert rejoined["cobrowse"]["started_at"] == active["started_at"]  # kept
    assert rejoined["control"] is False  # not asked for this time

    ended = client.post(cobrowse(cid, "/end"))
    assert ended.status_code == 200
    first_end = ended.json()["data"]["cobrowse"]
    assert first_end["status"] == "ended"
    assert first_end["ended_by"] == "agent"
    assert first_end["ended_at"] is not None
    repeat = client.post(cobrowse(cid, "/end")).json()["data"]["cobrowse"]
    assert repeat["ended_at"] == first_end["ended_at"]  # a no-op
    late = client.post(cobrowse(cid, "/join"), {}, format="json")
    assert late.status_code == 404
    assert late.json()["error"]["code"] == "COBROWSE_NOT_ACTIVE"
    kinds = [r["kind"] for r in client.get(f"{CONVERSATIONS}/{cid}/activity").json()["data"]]
    assert kinds[:3] == ["cobrowse_ended", "cobrowse_started", "cobrowse_requested"]


def test_control_needs_the_visitors_consent(tenant, inbound):
    client = tenant.client()
    cid = conversation(tenant, inbound)
    public_client(tenant).post(WIDGET, {"conversation_id": cid, "control": False},
                               format="json")
    joined = client.post(cobrowse(cid, "/join"), {"control": True}, format="json")
    assert joined.json()["data"]["control"] is False
    claims = read_token(joined.json()["data"]["token"],
                        session_id=joined.json()["data"]["session_id"])
    assert claims["ctl"] is False
    assert claims["r"] == "agent"


def test_errors(tenant, other_tenant, inbound, settings):
    client = tenant.client()
    cid = conversation(tenant, inbound)
    for path in (cobrowse("not-an-id"), cobrowse("cnv_short")):
        response = client.get(path)
        assert response.status_code == 422
        assert response.json()["error"]["code"] == "VALIDATION_ERROR"
    unknown = cobrowse("cnv_" + "0" * 26)
    assert client.get(unknown).status_code == 404
    assert client.post(unknown + "/join", {}, format="json").json()["error"]["code"] == \
        "NOT_FOUND"
    assert client.post(unknown + "/end").status_code == 404
    assert client.post(cobrowse(cid, "/end")).status_code == 404  # no session yet
    none = client.post(cobrowse(cid, "/join"), {}, format="json")
    assert none.json()["error"]["code"] == "COBROWSE_NOT_ACTIVE"
    bad = client.post(cobrowse(cid, "/join"), {"control": "sure"}, format="json")
    assert bad.status_code in (400, 422)
    # Another tenant sees nothing, and its widget cannot start a session here.
    assert other_tenant.client().get(cobrowse(cid)).status_code == 404
    assert public_client(other_tenant).post(WIDGET, {"conversation_id": cid},
                                            format="json").status_code == 404
    widget = public_client(tenant)
    assert widget.post(WIDGET, {"conversation_id": cid}, format="json").status_code == 201
    # The widget's public key cannot join; an agent-role member neither (owner, admin or
    # developer only).
    assert widget.post(cobrowse(cid, "/join"), {}, format="json").status_code == 403
    user = User.objects.create_user("agent-cb@example.com", "Agent-Horse-7-battery")
    Membership.objects.for_organization(tenant.org).create(organization=tenant.org,
                                                           user=user, role=Role.AGENT)
    agent = tenant.session_client(user, "Agent-Horse-7-battery")
    assert agent.get(cobrowse(cid)).status_code == 200
    assert agent.post(cobrowse(cid, "/join"), {}, format="json").status_code == 403
    settings.COBROWSE_ENABLED = False
    off = client.post(cobrowse(cid, "/join"), {}, format="json")
    assert off.status_code == 503
    assert off.json()["error"]["code"] == "COBROWSE_UNAVAILABLE"
