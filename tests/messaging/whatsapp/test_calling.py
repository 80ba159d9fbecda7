"""Calling: state cached 5 minutes, enable / disable / register-webhook (owner/admin,
idempotent), outbound calls, permissions, inbound calls from the `calls` webhook with
accept / decline, call logs (masked for viewers) and the 30-day KPIs."""

from __future__ import annotations

import time
from datetime import timedelta
from decimal import Decimal

import pytest
import time_machine
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from messaging.whatsapp.models import Call
from platform_core.tenancy.context import tenant_context

from .conftest import (
    USER,
    USER_2,
    client_with_role,
    code,
    data,
    events,
    inbound,
    post_webhook,
    with_app_secret,
)

pytestmark = pytest.mark.django_db


def _calling(wa, action: str, client=None):
    return (client or wa.client()).post(
        f"/api/v1/whatsapp/connections/{wa.default}/calling/{action}")


def test_state_is_cached_and_invalidated_on_change(wa):
    client = wa.client()
    path = f"/api/v1/whatsapp/connections/{wa.default}/calling"
    first = data(client.get(path))
    assert (first["status"], first["cached"]) == ("DISABLED", False)
    assert data(client.get(path))["cached"] is True
    enabled = _calling(wa, "enable")
    assert enabled.status_code == 200
    assert data(enabled) == {"phone_number_id": wa.default, "status": "ENABLED",
                             "changed": True}
    after = data(client.get(path))
    assert (after["status"], after["cached"]) == ("ENABLED", False)
    # Idempotent.
    assert data(_calling(wa, "enable"))["changed"] is False
    # The cache lives five minutes.
    with time_machine.travel(timezone.now() + timedelta(seconds=301), tick=False):
        assert data(client.get(path))["cached"] is False
    assert data(_calling(wa, "disable"))["status"] == "DISABLED"
    assert data(client.get(path))["status"] == "DISABLED"
    assert client.get("/api/v1/whatsapp/connections/1/calling").status_code == 404


def test_register_webhook_is_idempotent(wa):
    first = _calling(wa, "register-webhook")
    assert first.status_code == 200
    body = data(first)
    assert body["already_registered"] is False
    assert body["field"] == "calls"
    assert body["callback_url"].endswith(f"/api/v1/inbound/whatsapp/{wa.org.slug}")
    again = data(_calling(wa, "register-webhook"))
    assert again["already_registered"] is True
    path = f"/api/v1/whatsapp/connections/{wa.default}/calling"
    assert data(wa.client().get(path))["calls_webhook_registered"] is True


@pytest.mark.parametrize("role", ["developer", "viewer"])
def test_calling_settings_are_for_owner_and_admin(wa, role):
    client = client_with_role(wa, role)
    for action in ("enable", "disable", "register-webhook"):
        response = _calling(wa, action, client)
        assert response.status_code == 403, action
    admin = client_with_role(wa, "admin")
    assert _calling(wa, "enable", admin).status_code == 200


def test_outbound_call_needs_calling_and_permission(wa):
    client = wa.client()
    body = {"to": USER, "session": {"sdp_type": "offer", "sdp": "v=0..."}}
    disabled = client.post("/api/v1/whatsapp/calling/calls", body, format="json")
    assert disabled.status_code == 409
    assert code(disabled) == "WHATSAPP_CALLING_DISABLED"
    _calling(wa, "enable")
    no_permission = client.post("/api/v1/whatsapp/calling/calls", body, format="json")
    assert no_permission.status_code == 422
    assert code(no_permission) == "WHATSAPP_CALL_PERMISSION_REQUIRED"
    inbound(wa)  # the user wrote: a temporary permission in the sandbox
    response = client.post("/api/v1/whatsapp/calling/calls", body, format="json")
    assert response.status_code == 201, response.content
    call = data(response)
    assert call["meta_call_id"].startswith("wacid.")
    assert (call["direction"], call["status"], call["to"]) == ("outbound", "ringing", USER)
    assert call["phone_number_id"] == wa.default
    assert [e.type for e in events(wa, "whatsapp.call")] == ["whatsapp.call.started"]
    developer = client_with_role(wa, "developer")
    assert developer.post("/api/v1/whatsapp/calling/calls", body,
                          format="json").status_code == 201
    agent = client_with_role(wa, "agent")
    assert agent.post("/api/v1/whatsapp/calling/calls", body, format="json").status_code == 403
    bad = client.post("/api/v1/whatsapp/calling/calls", {"to": USER, "session": {"sdp": 1}},
                      format="json")
    assert bad.status_code == 422


def test_permissions_of_a_contact(wa):
    client = wa.client()
    contact_id = data(client.post("/api/v1/contacts", {"phone": USER}, format="json"))["id"]
    before = data(client.get("/api/v1/whatsapp/calling/permissions",
                             {"contact_id": contact_id}))
    assert before["permission"] == {"status": "no_permission"}
    assert before["contact_id"] == contact_id
    inbound(wa)
    after = data(client.get("/api/v1/whatsapp/calling/permissions", {"contact_id": contact_id}))
    assert after["permission"]["status"] == "temporary"
    assert {"action_name": "start_call", "can_perform_action": True} in after["actions"]
    missing = client.get("/api/v1/whatsapp/calling/permissions")
    assert missing.status_code == 422
    unknown = client.get("/api/v1/whatsapp/calling/permissions", {"contact_id": "cnt_x"})
    assert unknown.status_code == 422


def _inbound_call(anon, wa, call_id: str, sender: str = USER):
    return post_webhook(anon, wa, "calls", {
        "messaging_product": "whatsapp",
        "metadata": {"display_phone_number": "15005550006", "phone_number_id": wa.default},
        "calls": [{"id": call_id, "from": sender.lstrip("+"), "to": "15005550006",
                   "event": "connect", "direction": "USER_INITIATED",
                   "timestamp": str(int(time.time())),
                   "session": {"sdp_type": "offer", "sdp": "v=0"}}]})


def _terminate(anon, wa, call_id: str, duration: int):
    return post_webhook(anon, wa, "calls", {
        "messaging_product": "whatsapp",
        "metadata": {"display_phone_number": "15005550006", "phone_number_id": wa.default},
        "calls": [{"id": call_id, "event": "terminate", "status": "COMPLETED",
                   "duration": duration, "timestamp": str(int(time.time()))}]})


def test_inbound_calls_accept_decline_and_end(wa, anon):
    with_app_secret(wa)
    ringing = _inbound_call(anon, wa, "wacid.IN1")
    assert ringing.status_code == 200, ringing.content
    assert data(ringing)["calls_updates"] == 1
    assert data(_inbound_call(anon, wa, "wacid.IN1"))["calls_updates"] == 0  # a replay
    client = wa.client()
    accepted = client.post("/api/v1/whatsapp/calling/calls/wacid.IN1/accept",
                           {"session": {"sdp_type": "answer", "sdp": "v=0"}}, format="json")
    assert accepted.status_code == 200, accepted.content
    assert data(accepted)["status"] == "accepted"
    twice = client.post("/api/v1/whatsapp/calling/calls/wacid.IN1/decline")
    assert twice.status_code == 409
    assert code(twice) == "WHATSAPP_CALL_NOT_RINGING"
    assert data(_terminate(anon, wa, "wacid.IN1", 95))["calls_updates"] == 1
    _inbound_call(anon, wa, "wacid.IN2", USER_2)
    declined = client.post("/api/v1/whatsapp/calling/calls/wacid.IN2/decline")
    assert data(declined)["status"] == "declined"
    assert client.post("/api/v1/whatsapp/calling/calls/wacid.NOPE/accept").status_code == 404
    with tenant_context(wa.org):
        ended = Call.objects.for_organization(wa.org).get(meta_call_id="wacid.IN1")
    assert (ended.status, ended.duration_seconds) == ("completed", 95)
    types = [e.type for e in events(wa, "whatsapp.call")]
    assert types == ["whatsapp.call.ringing", "whatsapp.call.accepted", "whatsapp.call.ended",
                     "whatsapp.call.ringing", "whatsapp.call.declined"]


def test_call_logs_paginated_and_masked_for_viewers(wa, anon):
    with_app_secret(wa)
    for i in range(3):
        _inbound_call(anon, wa, f"wacid.L{i}")
    owner = data(wa.client().get("/api/v1/whatsapp/calling/calls"))
    assert [c["meta_call_id"] for c in owner] == ["wacid.L2", "wacid.L1", "wacid.L0"]
    assert owner[0]["from"] == USER
    viewer = client_with_role(wa, "viewer")
    masked = data(viewer.get("/api/v1/whatsapp/calling/calls"))
    assert masked[0]["from"] == "+1******0123"
    assert USER not in str(masked)
    client = wa.client()
    with CaptureQueriesContext(connection) as few:
        client.get("/api/v1/whatsapp/calling/calls?limit=2")
    for i in range(3, 8):
        _inbound_call(anon, wa, f"wacid.L{i}")
    with CaptureQueriesContext(connection) as many:
        page = client.get("/api/v1/whatsapp/calling/calls?limit=4")
    assert len(many) == len(few)
    cursor = page.json()["meta"]["pagination"]["cursor"]
    rest = data(client.get(f"/api/v1/whatsapp/calling/calls?limit=4&cursor={cursor}"))
    assert len(rest) == 4


def test_analytics_over_thirty_days_in_one_query(wa, anon, settings):
    settings.WHATSAPP_CALL_PRICE_PER_MINUTE = "0.0500"
    with_app_secret(wa)
    _calling(wa, "enable")
    inbound(wa)
    client = wa.client()
    out = data(client.post("/api/v1/whatsapp/calling/calls", {"to": USER}, format="json"))
    post_webhook(anon, wa, "calls", {
        "metadata": {"phone_number_id": wa.default},
        "statuses": [{"id": out["meta_call_id"], "type": "call", "status": "ACCEPTED",
                      "timestamp": str(int(time.time()))}]})
    _terminate(anon, wa, out["meta_call_id"], 125)  # three started minutes
    _inbound_call(anon, wa, "wacid.A1")
    client.post("/api/v1/whatsapp/calling/calls/wacid.A1/decline")
    _inbound_call(anon, wa, "wacid.A2")
    _terminate(anon, wa, "wacid.A2", 0)  # never answered: missed
    with tenant_context(wa.org):  # an old call outside the window
        Call.objects.for_organization(wa.org).create(
            organization=wa.org, meta_call_id="wacid.OLD", direction="inbound",
            from_number=USER, to_number="+15005550006", status="completed",
            duration_seconds=60, created_at=timezone.now() - timedelta(days=31))
    with CaptureQueriesContext(connection) as queries:
        response = client.get("/api/v1/whatsapp/calling/analytics")
    kpis = data(response)
    assert kpis["volume"] == {"total": 3, "inbound": 2, "outbound": 1}
    assert (kpis["accepted"], kpis["declined"], kpis["missed"]) == (1, 1, 1)
    assert kpis["accept_rate"] == round(1 / 3, 4)
    assert kpis["total_duration_seconds"] == 125
    assert Decimal(kpis["spend"]) == Decimal("0.1500")
    assert kpis["window_days"] == 30
    aggregate = [q for q in queries.captured_queries if "whatsapp_call" in q["sql"]]
    assert len(aggregate) == 1
