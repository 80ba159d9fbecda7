"""Flows: draft (owner/admin), assets validated, publish (irreversible), delete drafts only,
send-flow with flow_cta, submissions as nfm_reply with the flow_token echoed, the funnel."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
import time_machine
from django.utils import timezone

from messaging.whatsapp.models import FlowSubmission
from platform_core.tenancy.context import tenant_context

from .conftest import (
    USER,
    client_with_role,
    code,
    data,
    events,
    inbound,
    messages,
    post_webhook,
    wa_message,
    with_app_secret,
)

pytestmark = pytest.mark.django_db

FLOW_JSON = {
    "version": "6.0",
    "screens": [
        {"id": "DETAILS", "layout": {"type": "SingleColumnLayout", "children": [
            {"type": "Form", "name": "form", "children": [
                {"type": "TextInput", "name": "name", "label": "Name"},
                {"type": "Footer", "label": "Next"}]}]}},
        {"id": "DATE", "terminal": True, "layout": {"type": "SingleColumnLayout", "children": [
            {"type": "DatePicker", "name": "date", "label": "Date"},
            {"type": "Footer", "label": "Book"}]}},
    ],
    "routing_model": {"DETAILS": ["DATE"], "DATE": []},
}


def _flow(wa, client=None) -> dict:
    response = (client or wa.client()).post("/api/v1/whatsapp/flows", {
        "name": "Book a visit", "categories": ["APPOINTMENT_BOOKING"]}, format="json")
    assert response.status_code == 201, response.content
    return data(response)


def _published(wa) -> dict:
    flow = _flow(wa)
    client = wa.client()
    assert client.post(f"/api/v1/whatsapp/flows/{flow['id']}/assets", {"flow_json": FLOW_JSON},
                       format="json").status_code == 200
    return data(client.post(f"/api/v1/whatsapp/flows/{flow['id']}/publish"))


def test_draft_lifecycle(wa):
    client = wa.client()
    flow = _flow(wa)
    assert (flow["status"], flow["has_assets"], flow["flow_json"]) == ("draft", False, None)
    assert flow["meta_flow_id"].isdigit()
    early = client.post(f"/api/v1/whatsapp/flows/{flow['id']}/publish")
    assert early.status_code == 409
    assert code(early) == "WHATSAPP_FLOW_NO_ASSETS"
    assets = client.post(f"/api/v1/whatsapp/flows/{flow['id']}/assets",
                         {"flow_json": FLOW_JSON}, format="json")
    assert assets.status_code == 200
    assert (data(assets)["json_version"], data(assets)["has_assets"]) == ("6.0", True)
    published = client.post(f"/api/v1/whatsapp/flows/{flow['id']}/publish")
    assert published.status_code == 200
    assert data(published)["status"] == "published"
    assert data(published)["published_at"] is not None
    # Irreversible: no new assets, no second publish, no delete.
    for response in (client.post(f"/api/v1/whatsapp/flows/{flow['id']}/assets",
                                 {"flow_json": FLOW_JSON}, format="json"),
                     client.post(f"/api/v1/whatsapp/flows/{flow['id']}/publish"),
                     client.delete(f"/api/v1/whatsapp/flows/{flow['id']}")):
        assert response.status_code == 409
        assert code(response) == "WHATSAPP_FLOW_NOT_DRAFT"
    read = data(client.get(f"/api/v1/whatsapp/flows/{flow['id']}"))
    assert read["flow_json"] == FLOW_JSON
    listed = data(client.get("/api/v1/whatsapp/flows"))
    assert [f["id"] for f in listed] == [flow["id"]]
    draft = _flow(wa)
    assert client.delete(f"/api/v1/whatsapp/flows/{draft['id']}").status_code == 204
    assert client.get(f"/api/v1/whatsapp/flows/{draft['id']}").status_code == 404


def test_create_validation_and_roles(wa):
    client = wa.client()
    for body, field in (({"name": "x", "categories": ["SHOPPING"]}, "categories"),
                        ({"name": "x", "categories": []}, "categories"),
                        ({"categories": ["OTHER"]}, "name")):
        response = client.post("/api/v1/whatsapp/flows", body, format="json")
        assert response.status_code == 422
        assert response.json()["error"]["details"]["issues"][0]["field"].startswith(field)
    developer = client_with_role(wa, "developer")
    assert developer.post("/api/v1/whatsapp/flows", {"name": "x", "categories": ["OTHER"]},
                          format="json").status_code == 403
    assert developer.get("/api/v1/whatsapp/flows").status_code == 403
    admin = client_with_role(wa, "admin")
    _flow(wa, admin)


@pytest.mark.parametrize(("change", "field"), [
    ({"version": 6}, "flow_json.version"),
    ({"screens": []}, "flow_json.screens"),
    ({"screens": [{"id": "lower", "terminal": True, "layout": {
        "type": "SingleColumnLayout", "children": []}}]}, "flow_json.screens[0].id"),
    ({"screens": [{"id": "A", "layout": {"type": "SingleColumnLayout", "children": []}}]},
     "flow_json.screens"),
    ({"screens": [{"id": "A", "terminal": True, "layout": {"type": "Grid"}}]},
     "flow_json.screens[0].layout"),
    ({"routing_model": {"DETAILS": ["NOWHERE"]}}, "flow_json.routing_model.DETAILS"),
])
def test_assets_are_validated(wa, change, field):
    flow = _flow(wa)
    response = wa.client().post(f"/api/v1/whatsapp/flows/{flow['id']}/assets",
                                {"flow_json": {**FLOW_JSON, **change}}, format="json")
    assert response.status_code == 422
    assert response.json()["error"]["details"]["issues"][0]["field"] == field


def test_send_flow_and_record_the_submission(wa, anon):
    client = wa.client()
    draft = _flow(wa)
    inbound(wa)
    body = {"to": USER, "flow_cta": "Book now", "body": "Pick a date"}
    refused = client.post("/api/v1/whatsapp/messages/send-flow",
                          {**body, "flow_id": draft["id"]}, format="json")
    assert refused.status_code == 422
    assert code(refused) == "WHATSAPP_FLOW_NOT_PUBLISHED"
    flow = _published(wa)
    response = client.post("/api/v1/whatsapp/messages/send-flow",
                           {**body, "flow_id": flow["id"], "flow_token": "tok-123"},
                           format="json")
    assert response.status_code == 202, response.content
    sent = data(response)
    assert (sent["flow_token"], sent["flow_id"]) == ("tok-123", flow["id"])
    (message,) = messages(wa, pk=sent["message_id"])
    interactive = message.metadata["whatsapp"]["interactive"]
    assert interactive["type"] == "flow"
    params = interactive["action"]["parameters"]
    assert (params["flow_cta"], params["flow_token"], params["flow_id"]) == (
        "Book now", "tok-123", flow["meta_flow_id"])
    assert params["flow_action_payload"] == {"screen": "DETAILS"}
    reused = client.post("/api/v1/whatsapp/messages/send-flow",
                         {**body, "flow_id": flow["id"], "flow_token": "tok-123"},
                         format="json")
    assert reused.status_code == 422
    long_cta = client.post("/api/v1/whatsapp/messages/send-flow",
                           {**body, "flow_id": flow["id"], "flow_cta": "x" * 31}, format="json")
    assert long_cta.json()["error"]["details"]["issues"][0]["field"] == "flow_cta"
    unknown = client.post("/api/v1/whatsapp/messages/send-flow",
                          {**body, "flow_id": "wfl_nope"}, format="json")
    assert unknown.json()["error"]["details"]["issues"][0]["field"] == "flow_id"

    with_app_secret(wa)
    reply = wa_message({"id": "wamid.NFM1", "type": "interactive", "interactive": {
        "type": "nfm_reply", "nfm_reply": {"name": "flow", "body": "Sent", "response_json":
                                           json.dumps({"flow_token": "tok-123",
                                                       "name": "Kerry",
                                                       "date": "2026-12-01"})}}})
    assert post_webhook(anon, wa, "messages", reply).status_code == 200
    with tenant_context(wa.org):
        (submission,) = FlowSubmission.objects.for_organization(wa.org)
    assert (submission.flow_id, submission.flow_token) == (flow["id"], "tok-123")
    assert submission.response["date"] == "2026-12-01"
    inbound_reply = messages(wa, pk=submission.message_id)[0]
    assert inbound_reply.body == "Sent"
    assert submission.conversation_id == inbound_reply.conversation_id is not None
    (event,) = events(wa, "whatsapp.flow.submitted")
    assert event.data["flow_token"] == "tok-123"
    assert event.data["flow_id"] == flow["id"]


def test_funnel_counts_steps_in_the_window(wa, anon):
    client = wa.client()
    flow = _published(wa)
    with_app_secret(wa)
    inbound(wa)
    for i in range(4):
        client.post("/api/v1/whatsapp/messages/send-flow", {
            "to": USER, "flow_id": flow["id"], "flow_cta": "Go", "body": "b",
            "flow_token": f"t{i}"}, format="json")
    answers = [{"flow_token": "t0", "name": "A", "date": "d"},
               {"flow_token": "t1", "date": "d"}]
    for i, answer in enumerate(answers):
        post_webhook(anon, wa, "messages", wa_message({
            "id": f"wamid.F{i}", "type": "interactive", "interactive": {
                "type": "nfm_reply", "nfm_reply": {"body": "Sent",
                                                   "response_json": json.dumps(answer)}}}))
    funnel = data(client.get(f"/api/v1/whatsapp/flows/{flow['id']}/funnel"))
    assert (funnel["sent"], funnel["completed"], funnel["completion_rate"]) == (4, 2, 0.5)
    assert [(s["step"], s["count"], s["drop_off"]) for s in funnel["steps"]] == [
        ("sent", 4, 0), ("DETAILS", 1, 3), ("DATE", 2, 0), ("completed", 2, 0)]
    future = (timezone.now() + timedelta(days=1)).isoformat()
    empty = data(client.get(f"/api/v1/whatsapp/flows/{flow['id']}/funnel", {"since": future,
                            "until": (timezone.now() + timedelta(days=2)).isoformat()}))
    assert (empty["sent"], empty["completed"]) == (0, 0)
    with time_machine.travel(timezone.now() + timedelta(days=31), tick=False):
        later = data(client.get(f"/api/v1/whatsapp/flows/{flow['id']}/funnel"))
    assert later["sent"] == 0  # the default window is the trailing 30 days
    bad = client.get(f"/api/v1/whatsapp/flows/{flow['id']}/funnel", {"since": "yesterday"})
    assert bad.status_code == 422
    assert bad.json()["error"]["details"]["issues"][0]["field"] == "since"
    backwards = client.get(f"/api/v1/whatsapp/flows/{flow['id']}/funnel",
                           {"since": future, "until": timezone.now().isoformat()})
    assert backwards.status_code == 422
