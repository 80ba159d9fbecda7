"""The agent resource over HTTP (Document 3, 2.1, 3 and 4.1): create, list, fetch, update
with kept versions, deploy, undeploy, delete; roles, validation, unknown ids."""

from __future__ import annotations

import pytest

from agents.agent_models import Agent, AgentVersion
from messaging.models import MessagingService
from platform_core.tenancy.context import tenant_context
from tests.contacts.segments.helpers import member_client

pytestmark = pytest.mark.django_db

URL = "/api/v1/agents"
SANDBOX_NUMBER = "+15005550006"

ORDER_TOOL = {"name": "order_status", "description": "Look up an order's status",
              "parameters": {"type": "object",
                             "properties": {"order_id": {"type": "string",
                                                         "pattern": "^[0-9]{5}$"}},
                             "required": ["order_id"]}}


def body(**extra) -> dict:
    return {"name": "Support bot", "type": "chatbot", "model": "gpt-4o-mini",
            "system_prompt": "You help Acme customers.", "tools": [ORDER_TOOL],
            "safety_config": {"pii_redaction": True, "content_filter": False}, **extra}


def create(client, **extra) -> dict:
    response = client.post(URL, body(**extra), format="json")
    assert response.status_code == 201, response.content
    return response.json()["data"]


def issues(response) -> dict[str, str]:
    assert response.status_code == 422, response.content
    error = response.json()["error"]
    assert error["code"] == "VALIDATION_ERROR"
    return {i["field"]: i["message"] for i in error["details"]["issues"]}


def test_create_answers_a_draft_with_the_fields(tenant):
    data = create(tenant.client())
    assert data["id"].startswith("agt_")
    assert data["status"] == "draft"
    assert data["version"] == 1
    assert (data["name"], data["type"], data["model"]) == ("Support bot", "chatbot",
                                                          "gpt-4o-mini")
    assert data["tools"][0]["name"] == "order_status"
    assert data["safety_config"] == {"pii_redaction": True, "content_filter": False}
    assert data["created_at"]
    assert "deployment" not in data["config"]
    assert (data["active_conversations"], data["conversation_count"],
            data["total_tokens"]) == (0, 0, 0)
    fetched = tenant.client().get(f"{URL}/{data['id']}")
    assert fetched.status_code == 200
    assert fetched.json()["data"]["id"] == data["id"]


@pytest.mark.parametrize(("patch", "field"), [
    ({"name": ""}, "name"),
    ({"model": None}, "model"),
    ({"type": "robot"}, "type"),
    ({"tools": [{**ORDER_TOOL, "parameters": {"type": "object",
                                              "properties": {"x": {"type": "strin"}}}}]},
     "tools.0.parameters"),
    ({"tools": [{**ORDER_TOOL, "parameters": {"type": "array"}}]}, "tools.0.parameters"),
    ({"tools": [{**ORDER_TOOL, "parameters": ["not", "an", "object"]}]},
     "tools.0.parameters"),
    ({"tools": [{**ORDER_TOOL, "parameters": {"type": "object", "required": "order_id"}}]},
     "tools.0.parameters"),
    ({"tools": [ORDER_TOOL, ORDER_TOOL]}, "tools"),
    ({"tools": [{**ORDER_TOOL, "name": "has space"}]}, "tools.0.name"),
    ({"safety_config": {"pii_redaction": "maybe"}}, "safety_config.pii_redaction"),
    ({"channels": ["fax"]}, "channels.0"),
    ({"config": {"handoff": {"min_confidence": 2}}}, "config.handoff.min_confidence"),
])
def test_invalid_create_bodies_answer_422_with_issues(tenant, patch, field):
    found = issues(tenant.client().post(URL, {**body(), **patch}, format="json"))
    assert field in found, found


def test_tool_webhook_url_is_ssrf_checked(tenant):
    tool = {**ORDER_TOOL, "webhook_url": "http://169.254.169.254/latest/meta-data"}
    found = issues(tenant.client().post(URL, body(tools=[tool]), format="json"))
    assert "tools.0.webhook_url" in found


def test_roles_writes_need_owner_admin_or_developer_reads_any_role(tenant):
    agent = create(tenant.client())
    developer = member_client(tenant, "developer")
    assert developer.post(URL, body(), format="json").status_code == 201
    for role in ("agent", "viewer"):
        client = member_client(tenant, role)
        assert client.get(URL).status_code == 200
        assert client.get(f"{URL}/{agent['id']}").status_code == 200
        for method, url, payload in (
                ("post", URL, body()),
                ("patch", f"{URL}/{agent['id']}", {"name": "x"}),
                ("post", f"{URL}/{agent['id']}/deploy", {"channel": "rcs"}),
                ("post", f"{URL}/{agent['id']}/undeploy", {}),
                ("delete", f"{URL}/{agent['id']}", None)):
            response = getattr(client, method)(url, payload, format="json")
            assert response.status_code == 403, (role, method, url, response.content)
            assert response.json()["error"]["code"] == "INSUFFICIENT_PERMISSIONS"
    assert tenant.client().get(f"{URL}/{agent['id']}").json()["data"]["name"] == "Support bot"


def test_unknown_id_is_404_on_every_route(tenant):
    client = tenant.client()
    missing = f"{URL}/agt_missing"
    for method, url, payload in (("get", missing, None), ("patch", missing, {"name": "x"}),
                                 ("post", f"{missing}/deploy", {"channel": "rcs"}),
                                 ("post", f"{missing}/undeploy", {}),
                                 ("delete", missing, None)):
        response = getattr(client, method)(url, payload, format="json")
        assert response.status_code == 404, (method, url)
        assert response.json()["error"]["code"] == "NOT_FOUND"


def test_update_changes_only_sent_fields_raises_version_and_keeps_the_previous(tenant):
    client = tenant.client()
    agent = create(client)
    response = client.patch(f"{URL}/{agent['id']}", {"system_prompt": "Be brief."},
                            format="json")
    assert response.status_code == 200, response.content
    data = response.json()["data"]
    assert data["id"] == agent["id"]
    assert data["updated_at"]
    assert data["version"] == 2
    assert data["system_prompt"] == "Be brief."
    assert data["name"] == "Support bot"
    assert data["tools"] == agent["tools"]
    response = client.patch(f"{URL}/{agent['id']}", {"safety_config": {"content_filter": True}},
                            format="json")
    data = response.json()["data"]
    assert data["version"] == 3
    assert data["safety_config"] == {"pii_redaction": True, "content_filter": True}
    with tenant_context(tenant.org):
        versions = list(AgentVersion.objects.filter(agent_id=agent["id"])
                        .order_by("version").values_list("version", "snapshot"))
    assert [v for v, _ in versions] == [1, 2]
    assert versions[0][1]["system_prompt"] == "You help Acme customers."
    assert versions[1][1]["system_prompt"] == "Be brief."
    assert versions[1][1]["safety_config"]["content_filter"] is False
    bad = client.patch(f"{URL}/{agent['id']}", {"tools": [ORDER_TOOL, ORDER_TOOL]},
                       format="json")
    assert "tools" in issues(bad)
    assert client.get(f"{URL}/{agent['id']}").json()["data"]["version"] == 3


def test_list_filters_by_status_pages_by_cursor_and_reads_counters(
        tenant, other_tenant, django_assert_max_num_queries):
    client = tenant.client()
    ids = [create(client, name=f"Bot {i}")["id"] for i in range(5)]
    deployed = client.post(f"{URL}/{ids[1]}/deploy", {"channel": "rcs"}, format="json")
    assert deployed.status_code == 200
    create(other_tenant.client())
    with tenant_context(tenant.org):
        Agent.objects.filter(pk=ids[0]).update(active_conversations=2, conversation_count=7,
                                               total_tokens=1234)
    with django_assert_max_num_queries(8):
        first = client.get(URL, {"limit": 2})
    assert first.status_code == 200
    page = first.json()
    assert [a["id"] for a in page["data"]] == [ids[4], ids[3]]
    cursor = page["meta"]["pagination"]["cursor"]
    seen = [a["id"] for a in page["data"]]
    while cursor:
        page = client.get(URL, {"limit": 2, "cursor": cursor}).json()
        seen += [a["id"] for a in page["data"]]
        cursor = page["meta"]["pagination"]["cursor"]
    assert seen == list(reversed(ids))
    counted = next(a for a in client.get(URL).json()["data"] if a["id"] == ids[0])
    assert (counted["active_conversations"], counted["conversation_count"],
            counted["total_tokens"]) == (2, 7, 1234)
    active = client.get(URL, {"status": "active"}).json()["data"]
    assert [a["id"] for a in active] == [ids[1]]
    assert len(client.get(URL, {"status": "draft"}).json()["data"]) == 4
    assert issues(client.get(URL, {"status": "paused"}))


def test_deploy_rules_per_channel(tenant, settings):
    settings.ALLOW_PRIVATE_WEBHOOK_TARGETS = False
    client = tenant.client()
    agent = create(client)
    deploy = f"{URL}/{agent['id']}/deploy"
    assert "channel" in issues(client.post(deploy, {"channel": "fax"}, format="json"))
    assert "webhook_url" in issues(client.post(deploy, {"channel": "webhook"}, format="json"))
    assert "webhook_url" in issues(client.post(
        deploy, {"channel": "webhook", "webhook_url": "http://127.0.0.1/hook"}, format="json"))
    assert "phone_number" in issues(client.post(
        deploy, {"channel": "webhook", "webhook_url": "https://93.184.216.34/hook",
                 "phone_number": SANDBOX_NUMBER}, format="json"))
    assert "webhook_url" in issues(client.post(
        deploy, {"channel": "sms", "phone_number": SANDBOX_NUMBER,
                 "webhook_url": "https://93.184.216.34/hook"}, format="json"))
    for channel in ("sms", "whatsapp", "voice"):
        assert "phone_number" in issues(client.post(deploy, {"channel": channel},
                                                    format="json"))
    assert "phone_number" in issues(client.post(
        deploy, {"channel": "sms", "phone_number": "+14155550199"}, format="json"))
    assert "phone_number" in issues(client.post(
        deploy, {"channel": "sms", "phone_number": "not a number"}, format="json"))
    assert "phone_number" in issues(client.post(
        deploy, {"channel": "rcs", "phone_number": SANDBOX_NUMBER}, format="json"))
    assert client.get(f"{URL}/{agent['id']}").json()["data"]["status"] == "draft"


def test_deploy_binds_a_sender_number_and_undeploy_drops_it(tenant):
    client = tenant.client()
    with tenant_context(tenant.org):
        MessagingService.objects.create(organization=tenant.org, name="Pool",
                                        senders=[{"channel": "whatsapp",
                                                  "from": "+14155550142"}])
    agent = create(client)
    response = client.post(f"{URL}/{agent['id']}/deploy",
                           {"channel": "whatsapp", "phone_number": "+1 415 555 0142"},
                           format="json")
    assert response.status_code == 200, response.content
    data = response.json()["data"]
    assert data["status"] == "active"
    deployment = data["config"]["deployment"]
    assert deployment["channel"] == "whatsapp"
    assert deployment["phone_number"] == "+14155550142"
    assert deployment["deployed_at"]
    other = create(client, name="Second")
    clash = client.post(f"{URL}/{other['id']}/deploy",
                        {"channel": "whatsapp", "phone_number": "+14155550142"}, format="json")
    assert clash.status_code == 409
    assert clash.json()["error"]["details"]["agent_id"] == agent["id"]
    sms = client.post(f"{URL}/{other['id']}/deploy",
                      {"channel": "sms", "phone_number": SANDBOX_NUMBER}, format="json")
    assert sms.status_code == 200, sms.content
    undeployed = client.post(f"{URL}/{agent['id']}/undeploy", format="json")
    assert undeployed.status_code == 200
    data = undeployed.json()["data"]
    assert data["status"] == "draft"
    assert "deployment" not in data["config"]
    with tenant_context(tenant.org):
        row = Agent.objects.get(pk=agent["id"])
    assert (row.deploy_channel, row.deploy_phone_number) == ("", "")
    # An update keeps the deployment of an active agent.
    patched = client.patch(f"{URL}/{other['id']}", {"config": {"handoff": {
        "max_unresolved_turns": 2}}}, format="json").json()["data"]
    assert patched["config"]["deployment"]["channel"] == "sms"
    assert patched["config"]["handoff"] == {"max_unresolved_turns": 2}


def test_webhook_deploy_keeps_the_url(tenant, settings):
    settings.ALLOW_PRIVATE_WEBHOOK_TARGETS = True
    client = tenant.client()
    agent = create(client)
    response = client.post(f"{URL}/{agent['id']}/deploy",
                           {"channel": "webhook", "webhook_url": "http://127.0.0.1:9/turns"},
                           format="json")
    assert response.status_code == 200, response.content
    deployment = response.json()["data"]["config"]["deployment"]
    assert deployment["channel"] == "webhook"
    assert deployment["phone_number"] is None
    assert deployment["webhook_url"] == "http://127.0.0.1:9/turns"


def test_delete_answers_204_and_keeps_conversations(tenant):
    from conversations.models import Conversation

    client = tenant.client()
    agent = create(client)
    with tenant_context(tenant.org):
        conversation = Conversation.objects.create(organization=tenant.org, contact_id="cnt_x",
                                                   channel="sms", ai_agent_id=agent["id"])
    response = client.delete(f"{URL}/{agent['id']}")
    assert response.status_code == 204
    assert client.get(f"{URL}/{agent['id']}").status_code == 404
    kept = client.get(f"/api/v1/conversations/{conversation.pk}")
    assert kept.status_code == 200
    with tenant_context(tenant.org):
        assert Conversation.objects.get(pk=conversation.pk).ai_agent_id == agent["id"]
