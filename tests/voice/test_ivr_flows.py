"""IVR flows over HTTP: CRUD, every validation rule, publish, and the DTMF walk."""

from __future__ import annotations

import re
from xml.etree import ElementTree

import pytest

from messaging.providers.models import ProviderAccount
from recordings.models import Recording

from .conftest import FLOW, NUMBER, TWILIO_TOKEN, flow, twilio_post

pytestmark = pytest.mark.django_db
BASE = "/api/v1/voice/ivr-flows"


def create(client, definition=None, **extra):
    body = {"name": "Main line", "active": True, "definition": FLOW if definition is None else definition,
            **extra}
    return client.post(BASE, body, format="json")


def refused(client, definition, rule: str, node_id: str | None = None):
    response = create(client, definition)
    assert response.status_code == 422, response.content
    error = response.json()["error"]
    assert error["code"] == "VALIDATION_ERROR"
    assert error["details"]["rule"] == rule, error
    if node_id is not None:
        assert error["details"]["node_id"] == node_id, error
    return error


def test_crud_and_publish(tenant):
    client = tenant.client()
    created = create(client, phone_numbers=[NUMBER])
    assert created.status_code == 201, created.content
    data = created.json()["data"]
    assert data["id"].startswith("ivr_")
    assert data["version"] == 0
    assert data["phone_numbers"] == [NUMBER]
    flow_id = data["id"]
    assert client.get(f"{BASE}/{flow_id}/twiml").json()["error"]["code"] == \
        "IVR_FLOW_NOT_PUBLISHED"
    one = client.post(f"{BASE}/{flow_id}/publish")
    assert one.status_code == 200
    assert one.json()["data"]["version"] == 1
    assert client.post(f"{BASE}/{flow_id}/publish").json()["data"]["version"] == 2
    patched = client.patch(f"{BASE}/{flow_id}", {"name": "Renamed"}, format="json")
    assert patched.json()["data"]["name"] == "Renamed"
    assert patched.json()["data"]["version"] == 2
    assert [f["id"] for f in client.get(BASE).json()["data"]] == [flow_id]
    # A second flow cannot take the same number.
    clash = create(client, phone_numbers=[NUMBER])
    assert clash.status_code == 409
    assert client.delete(f"{BASE}/{flow_id}").status_code == 204
    assert client.get(f"{BASE}/{flow_id}").status_code == 404


def test_list_query_count(tenant, django_assert_max_num_queries):
    client = tenant.client()
    for _ in range(3):
        create(client)
    with django_assert_max_num_queries(7):
        assert len(client.get(BASE).json()["data"]) == 3


def test_two_starts(tenant):
    nodes = [*FLOW["nodes"], {"id": "start2", "type": "ivrStart", "data": {}}]
    refused(tenant.client(), flow(nodes=nodes), "start_count", "start2")


def test_no_start(tenant):
    refused(tenant.client(), {"nodes": [{"id": "bye", "type": "hangup"}], "edges": []},
            "start_count")


def test_no_terminal(tenant):
    definition = {"nodes": [
        {"id": "s", "type": "ivrStart"},
        {"id": "m", "type": "menu", "data": {"prompt": "Hi", "menuOptions": [
            {"key": "1", "label": "again"}]}}],
        "edges": [{"id": "a", "source": "s", "target": "m"},
                  {"id": "b", "source": "m", "target": "m", "sourceHandle": "1"}]}
    refused(tenant.client(), definition, "no_terminal")


def test_unreachable_node(tenant):
    nodes = [*FLOW["nodes"], {"id": "orphan", "type": "hangup"}]
    refused(tenant.client(), flow(nodes=nodes), "unreachable", "orphan")


def test_loop_without_exit(tenant):
    definition = {"nodes": [
        {"id": "s", "type": "ivrStart"},
        {"id": "a", "type": "menu", "data": {"prompt": "A", "menuOptions": [
            {"key": "1", "label": "to b"}, {"key": "2", "label": "bye"}]}},
        {"id": "b", "type": "menu", "data": {"prompt": "B", "menuOptions": [
            {"key": "1", "label": "to c"}]}},
        {"id": "c", "type": "menu", "data": {"prompt": "C", "menuOptions": [
            {"key": "1", "label": "to b"}]}},
        {"id": "bye", "type": "hangup"}],
        "edges": [{"id": "e0", "source": "s", "target": "a"},
                  {"id": "e1", "source": "a", "target": "b", "sourceHandle": "1"},
                  {"id": "e2", "source": "a", "target": "bye", "sourceHandle": "2"},
                  {"id": "e3", "source": "b", "target": "c", "sourceHandle": "1"},
                  {"id": "e4", "source": "c", "target": "b", "sourceHandle": "1"}]}
    refused(tenant.client(), definition, "loop_without_exit", "b")


def test_loop_with_exit_is_fine(tenant):
    # support -> main (*) is a loop, and main reaches terminals: accepted.
    assert create(tenant.client()).status_code == 201


@pytest.mark.parametrize("key", ["A", "10", "", 5])
def test_dtmf_keys(tenant, key):
    nodes = [dict(n) for n in FLOW["nodes"]]
    nodes[1] = {**nodes[1], "data": {**nodes[1]["data"], "menuOptions": [
        {"key": key, "label": "x"}]}}
    refused(tenant.client(), flow(nodes=nodes), "dtmf_key", "main")


def test_menu_option_without_edge(tenant):
    edges = [e for e in FLOW["edges"] if e["id"] != "e4"]
    nodes = [*FLOW["nodes"][:5], FLOW["nodes"][6]]
    refused(tenant.client(), flow(nodes=nodes, edges=edges), "menu_route", "main")


@pytest.mark.parametrize(("target", "rule"), [
    ("sip:alice@example.com", "sip_refused"), ("  SIP:bob@pbx", "sip_refused"),
    ("sips:x@y", "sip_refused"), ("12345678901", "transfer_target"),
    ("+1415", "transfer_target"), ("", "transfer_target")])
def test_transfer_targets(tenant, target, rule):
    nodes = [dict(n) for n in FLOW["nodes"]]
    nodes[2] = {**nodes[2], "data": {"transferTo": target}}
    refused(tenant.client(), flow(nodes=nodes), rule, "sales")


def test_extension_and_ring_group_targets_accepted(tenant):
    nodes = [dict(n) for n in FLOW["nodes"]]
    nodes[2] = {**nodes[2], "data": {"transferTo": "1042"}}
    assert create(tenant.client(), flow(nodes=nodes)).status_code == 201
    nodes[4] = {**nodes[4], "data": {"members": ["sip:x@y"]}}
    refused(tenant.client(), flow(nodes=nodes), "sip_refused", "billing")


def test_malformed_definitions(tenant):
    client = tenant.client()
    for bad in ({}, {"nodes": "x"}, {"nodes": [{"id": "a", "type": "dance"}]},
                {"nodes": [{"id": "a"}], "edges": [{"id": "e", "source": "a"}]}):
        assert create(client, bad).status_code == 422
    dangling = flow(edges=[*FLOW["edges"], {"id": "e9", "source": "main", "target": "nope",
                                            "sourceHandle": "5"}])
    refused(client, dangling, "dangling_edge", "nope")


class TestCallWalk:
    @pytest.fixture
    def line(self, tenant):
        account = ProviderAccount(organization=tenant.org, channel="voice", provider="twilio",
                                  config={"account_sid": "AC" + "1" * 32})
        account.credentials = {"auth_token": TWILIO_TOKEN}
        account.save()
        client = tenant.client()
        flow_id = create(client, phone_numbers=[NUMBER]).json()["data"]["id"]
        client.post(f"{BASE}/{flow_id}/publish")
        return f"/api/v1/voice/twilio/{tenant.org.slug}"

    @staticmethod
    def _action(xml: str, tag: str = "Gather") -> str:
        root = ElementTree.fromstring(xml)
        element = root.find(f".//{tag}")
        url = element.get("action") if tag != "Redirect" else element.text
        return url.split("8000", 1)[-1]

    def test_walk_step_by_step(self, tenant, line, anon):
        call = {"CallSid": "CA1", "From": "+14155550123", "To": NUMBER}
        first = twilio_post(anon, line, call)
        assert first.status_code == 200
        assert first["Content-Type"] == "text/xml"
        xml = first.content.decode()
        assert "<Say>Welcome to Acme.</Say>" in xml
        assert "Press 1 for sales" in xml
        # 2 -> support menu.
        support = twilio_post(anon, self._action(xml), {**call, "Digits": "2"}).content.decode()
        assert "Press 1 for billing" in support
        # * -> back to the main menu.
        back = twilio_post(anon, self._action(support), {**call, "Digits": "*"}).content.decode()
        assert "Press 1 for sales" in back
        # 7 is no option: told so, and the menu again.
        wrong = twilio_post(anon, self._action(back), {**call, "Digits": "7"}).content.decode()
        assert "not a valid choice" in wrong
        assert "Press 1 for sales" in wrong
        # 2 then 1 -> the ring group dials a number and an extension at once.
        support = twilio_post(anon, self._action(wrong), {**call, "Digits": "2"}).content.decode()
        ring = twilio_post(anon, self._action(support), {**call, "Digits": "1"}).content.decode()
        assert re.search(r"<Dial[^>]*><Number>\+14155550111</Number><Client>204</Client></Dial>",
                         ring)
        # 1 -> sales: a transfer whose no-answer edge says goodbye.
        sales = twilio_post(anon, self._action(back), {**call, "Digits": "1"}).content.decode()
        assert "<Number>+14155550199</Number>" in sales
        no_answer = twilio_post(anon, self._action(sales, "Dial"),
                                {**call, "DialCallStatus": "no-answer"}).content.decode()
        assert "<Say>Goodbye.</Say><Hangup/>" in no_answer
        answered = twilio_post(anon, self._action(sales, "Dial"),
                               {**call, "DialCallStatus": "completed"}).content.decode()
        assert "Goodbye" not in answered
        assert "<Hangup/>" in answered

    def test_voicemail_registers_a_recording(self, tenant, line, anon,
                                             django_capture_on_commit_callbacks):
        call = {"CallSid": "CA2", "From": "+14155550123", "To": NUMBER}
        xml = twilio_post(anon, line, call).content.decode()
        vm = twilio_post(anon, self._action(xml), {**call, "Digits": "9"}).content.decode()
        assert "<Record" in vm
        callback = ElementTree.fromstring(vm).find(".//Record").get("recordingStatusCallback")
        with django_capture_on_commit_callbacks(execute=False):
            done = twilio_post(anon, callback.split("8000", 1)[-1], {
                **call, "RecordingStatus": "completed", "RecordingSid": "RE1",
                "RecordingDuration": "12",
                "RecordingUrl": "https://api.twilio.com/2010-04-01/Accounts/AC1/Recordings/RE1"})
        assert done.status_code == 200
        recording = Recording.objects.dangerously_unscoped().get(call_sid="CA2")
        assert recording.kind == "call"
        assert recording.duration_seconds == 12
        assert recording.media_url.endswith("/RE1.wav")

    def test_unbound_number_and_bad_signature(self, tenant, line, anon):
        other = twilio_post(anon, line, {"CallSid": "CA3", "To": "+14155550142"})
        assert "not in service" in other.content.decode()
        forged = twilio_post(anon, line, {"CallSid": "CA3", "To": NUMBER}, token="wrong")
        assert forged.status_code == 401
        assert forged.json()["error"]["code"] == "INVALID_SIGNATURE"

    def test_inactive_flow_is_not_served(self, tenant, line, anon):
        client = tenant.client()
        flow_id = client.get(BASE).json()["data"][0]["id"]
        client.patch(f"{BASE}/{flow_id}", {"active": False}, format="json")
        answer = twilio_post(anon, line, {"CallSid": "CA4", "To": NUMBER}).content.decode()
        assert "not in service" in answer

    def test_preview(self, tenant, line):
        client = tenant.client()
        flow_id = client.get(BASE).json()["data"][0]["id"]
        preview = client.get(f"{BASE}/{flow_id}/twiml").json()["data"]
        assert preview["version"] == 1
        assert "<Gather" in preview["twiml"]
